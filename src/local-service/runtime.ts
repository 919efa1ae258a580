/**
 * The deterministic agent runtime of the local conversation service: it makes conversations behave
 * like real OpenHands 0.53 conversations (status transitions, agent-state observations, answers to
 * user messages) without an LLM, so the gateway and its tests see realistic event streams.
 *
 * What the agent answers to a message is agent-script.ts (a pure function); this module runs it: it
 * stores and publishes the events in order, on timers.
 *
 * Each conversation's alive part is an AgentLoop with a FIFO of timed steps; one timer per loop at most,
 * so the order of events is deterministic whatever the timings. Status updates and the closing
 * agent_state_changed observation are live only (the real server never stores them); every other event
 * goes through `store.appendEvent`, which assigns its id.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type pino from 'pino';
import {
  type AgentStateValue,
  type ConversationEventRecord,
  REQUESTABLE_AGENT_STATES,
  type RequestableAgentStateValue,
} from '../contract/records.ts';
import { agentScript } from './agent-script.ts';
import type {
  AgentRuntime,
  AgentTimings,
  ConversationStore,
  LiveEvent,
  LiveEventListener,
  StartAgentOptions,
  StoredEvent,
  TenantId,
} from './contracts.ts';

/**
 * Event timestamps as the real server writes them: ISO 8601 in the server's local time, microsecond
 * digits, and NO timezone designator (`2025-08-14T12:00:00.123456`). Conversation datetimes, by
 * contrast, are UTC with Z.
 */
export function localEventTimestamp(date: Date = new Date()): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `.${pad(date.getMilliseconds() * 1000, 6)}`
  );
}

/** Dependencies and options of {@link createAgentRuntime}. */
export interface AgentRuntimeDeps {
  store: ConversationStore;
  timings: AgentTimings;
  /** When true, each running conversation gets its own random session API key (cleared when it stops). */
  nestedRuntime: boolean;
  logger: pino.Logger;
  /**
   * Running loops allowed at once; starting one more stops the oldest (the real server's default is 3).
   * @default 50
   */
  maxRunningAgents?: number;
}

/** Default delays: slow enough to watch in a UI, fast enough not to bore anyone. */
export const DEFAULT_AGENT_TIMINGS: AgentTimings = { startupMs: 200, replyMs: 300, replayStepMs: 50 };

interface TimedStep {
  delayMs: number;
  run: () => void;
}

interface AgentLoop {
  tenant: TenantId;
  conversationId: string;
  key: string;
  steps: TimedStep[];
  timer: NodeJS.Timeout | null;
  agentState: AgentStateValue;
  /** Only in nested-runtime mode. Secret. */
  sessionApiKey: string | null;
}

type ParsedUserAction =
  | { kind: 'message'; content: string; imageUrls: string[]; fileUrls: string[] }
  | { kind: 'change_agent_state'; agentState: RequestableAgentStateValue };

/** The tenant and conversation id together: ids are globally unique, but the tenant keeps maps honest. */
function loopKey(tenant: TenantId, conversationId: string): string {
  return `${tenant}\u0000${conversationId}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringList(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return null;
  return value as string[];
}

/** Validates an `oh_user_action` payload; the reason is safe to log (never echoes the payload). */
function parseUserAction(raw: unknown): ParsedUserAction | { error: string } {
  if (!isRecord(raw)) return { error: 'payload is not an object' };
  const { action, args } = raw;
  if (typeof action !== 'string') return { error: 'payload has no string "action"' };
  if (!isRecord(args)) return { error: 'payload has no object "args"' };
  if (action === 'message') {
    if (typeof args.content !== 'string') return { error: 'message without string args.content' };
    const imageUrls = stringList(args.image_urls);
    const fileUrls = stringList(args.file_urls);
    if (imageUrls === null || fileUrls === null) return { error: 'message with non-string urls' };
    return { kind: 'message', content: args.content, imageUrls, fileUrls };
  }
  if (action === 'change_agent_state') {
    const state = args.agent_state;
    if (!(REQUESTABLE_AGENT_STATES as readonly unknown[]).includes(state)) {
      return { error: 'change_agent_state with an unknown agent_state' };
    }
    return { kind: 'change_agent_state', agentState: state as RequestableAgentStateValue };
  }
  return { error: 'unsupported action' };
}

function agentStateObservation(agentState: AgentStateValue, cause?: number): ConversationEventRecord {
  return {
    source: 'environment',
    message: '',
    ...(cause === undefined ? {} : { cause }),
    observation: 'agent_state_changed',
    content: '',
    extras: { agent_state: agentState, reason: '' },
  };
}

/** The live status update the real server sends when a conversation's title changes (never stored). */
function titleStatusUpdate(conversationId: string, title: string): ConversationEventRecord {
  return { status_update: true, type: 'info', message: conversationId, conversation_title: title };
}

function keysEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Creates the deterministic agent runtime. One per local service; `close()` clears every timer.
 */
export function createAgentRuntime(deps: AgentRuntimeDeps): AgentRuntime {
  const { store, timings, logger } = deps;
  const maxRunning = Math.max(1, deps.maxRunningAgents ?? 50);
  /** Insertion order is start order, so the first entry is the oldest loop. */
  const loops = new Map<string, AgentLoop>();
  const listeners = new Map<string, Set<LiveEventListener>>();
  const connections = new Map<string, number>();
  const removalListeners = new Map<string, Set<() => void>>();
  let closed = false;

  function publish(key: string, event: LiveEvent): void {
    const subscribers = listeners.get(key);
    if (!subscribers) return;
    for (const listener of [...subscribers]) {
      try {
        listener(event);
      } catch (error) {
        logger.error({ err: error }, 'live event listener failed');
      }
    }
  }

  function append(tenant: TenantId, conversationId: string, event: ConversationEventRecord): StoredEvent {
    const stored = store.appendEvent(tenant, conversationId, { ...event, timestamp: localEventTimestamp() });
    publish(loopKey(tenant, conversationId), stored);
    return stored;
  }

  function touch(tenant: TenantId, conversationId: string): void {
    store.updateConversation(tenant, conversationId, { lastUpdatedAt: new Date().toISOString() });
  }

  function setAgentState(loop: AgentLoop, state: AgentStateValue, cause?: number): void {
    loop.agentState = state;
    append(loop.tenant, loop.conversationId, agentStateObservation(state, cause));
  }

  function pump(loop: AgentLoop): void {
    if (loop.timer !== null || closed) return;
    const step = loop.steps.shift();
    if (!step) return;
    loop.timer = setTimeout(() => {
      loop.timer = null;
      if (loops.get(loop.key) !== loop) return;
      try {
        step.run();
      } catch (error) {
        // A failing step (for example a store write after shutdown began) must not kill the process.
        logger.error({ err: error, conversationId: loop.conversationId }, 'agent step failed');
      }
      pump(loop);
    }, step.delayMs);
  }

  function enqueue(loop: AgentLoop, delayMs: number, run: () => void): void {
    loop.steps.push({ delayMs, run });
    pump(loop);
  }

  /** Ends a loop: drops its pending steps, marks the conversation stopped, sends the closing observation. */
  function stopLoop(loop: AgentLoop): void {
    if (loop.timer !== null) clearTimeout(loop.timer);
    loop.timer = null;
    loop.steps = [];
    loops.delete(loop.key);
    try {
      store.updateConversation(loop.tenant, loop.conversationId, {
        status: 'STOPPED',
        runtimeStatus: null,
        sessionApiKey: null,
        lastUpdatedAt: new Date().toISOString(),
      });
    } catch (error) {
      logger.error(
        { err: error, conversationId: loop.conversationId },
        'could not mark conversation stopped',
      );
    }
    // Like the real server's session close: an agent_state_changed with no id, timestamp or source.
    publish(loop.key, {
      message: '',
      observation: 'agent_state_changed',
      content: '',
      extras: { agent_state: 'stopped', reason: '' },
    });
  }

  /** Runs the agent's answer to a user message (agent-script.ts) against the store and the live hub. */
  function answer(loop: AgentLoop, userEventId: number, content: string): void {
    const { tenant, conversationId } = loop;
    const script = agentScript(content);
    let previousId = userEventId;
    for (const step of script.steps) {
      if (step.kind === 'title') {
        store.updateConversation(tenant, conversationId, {
          title: step.title,
          lastUpdatedAt: new Date().toISOString(),
        });
        publish(loop.key, titleStatusUpdate(conversationId, step.title));
        continue;
      }
      const cause = step.causedBy === 'message' ? userEventId : previousId;
      // `cause` right after `message`, where the real server writes it.
      const { source, message, ...rest } = step.event as ConversationEventRecord & {
        source: string;
        message: string;
      };
      const event = { source, message, cause, ...rest } as ConversationEventRecord;
      previousId = append(tenant, conversationId, event).id;
    }
    setAgentState(loop, script.finalState, userEventId);
  }

  /** Queues the agent's handling of a stored user message: `running`, then (after replyMs) the answer. */
  function scheduleAnswer(loop: AgentLoop, userEvent: StoredEvent, content: string): void {
    enqueue(loop, 0, () => setAgentState(loop, 'running', userEvent.id));
    enqueue(loop, timings.replyMs, () => answer(loop, userEvent.id, content));
  }

  /** Plays a conversation's replay_json back as its own events, with new ids and remapped causes. */
  function scheduleReplay(loop: AgentLoop, replayJson: string): void {
    let recorded: unknown;
    try {
      recorded = JSON.parse(replayJson);
    } catch {
      recorded = undefined;
    }
    if (!Array.isArray(recorded)) {
      enqueue(loop, 0, () =>
        append(loop.tenant, loop.conversationId, {
          source: 'environment',
          message: 'replay_json is not a JSON list of events',
          observation: 'error',
          content: 'replay_json is not a JSON list of events',
          extras: { error_id: 'REPLAY$INVALID' },
        }),
      );
      return;
    }
    const newIds = new Map<number, number>();
    for (const item of recorded) {
      // Only actions and observations are conversation history; anything else in the list is ignored.
      if (!isRecord(item) || (typeof item.action !== 'string' && typeof item.observation !== 'string'))
        continue;
      enqueue(loop, timings.replayStepMs, () => {
        const { id: oldId, timestamp: _timestamp, cause, ...rest } = item;
        const mappedCause = typeof cause === 'number' ? newIds.get(cause) : undefined;
        const event = {
          ...rest,
          ...(mappedCause === undefined ? {} : { cause: mappedCause }),
        } as unknown as ConversationEventRecord;
        const stored = append(loop.tenant, loop.conversationId, event);
        if (typeof oldId === 'number') newIds.set(oldId, stored.id);
      });
    }
  }

  function start(tenant: TenantId, conversationId: string, options: StartAgentOptions = {}) {
    const key = loopKey(tenant, conversationId);
    if (loops.has(key)) return { alreadyRunning: true };
    const conversation = store.getConversation(tenant, conversationId);
    if (!conversation) throw new Error('cannot start the agent of an unknown conversation');
    if (closed) return { alreadyRunning: false };
    while (loops.size >= maxRunning) {
      const oldest = loops.values().next().value;
      if (!oldest) break;
      logger.info(
        { conversationId: oldest.conversationId },
        'stopping the oldest agent loop (limit reached)',
      );
      stopLoop(oldest);
    }
    const firstStart = store.listEvents(tenant, conversationId, -1).length === 0;
    const loop: AgentLoop = {
      tenant,
      conversationId,
      key,
      steps: [],
      timer: null,
      agentState: 'loading',
      sessionApiKey: deps.nestedRuntime ? randomBytes(24).toString('base64url') : null,
    };
    loops.set(key, loop);
    store.updateConversation(tenant, conversationId, {
      status: 'STARTING',
      runtimeStatus: 'STATUS$STARTING_RUNTIME',
      sessionApiKey: loop.sessionApiKey,
      lastUpdatedAt: new Date().toISOString(),
    });
    publish(key, {
      status_update: true,
      type: 'info',
      id: 'STATUS$STARTING_RUNTIME',
      message: 'Starting runtime...',
    });
    setAgentState(loop, 'loading');
    enqueue(loop, timings.startupMs, () => {
      store.updateConversation(tenant, conversationId, {
        status: 'RUNNING',
        runtimeStatus: 'STATUS$READY',
        lastUpdatedAt: new Date().toISOString(),
      });
      publish(key, { status_update: true, type: 'info', id: 'STATUS$READY', message: 'Runtime is ready' });
    });
    const replayJson = conversation.request.replay_json;
    if (firstStart && typeof replayJson === 'string' && replayJson !== '') scheduleReplay(loop, replayJson);
    const initial = options.initialUserMessage;
    if (typeof initial === 'string' && initial !== '') {
      enqueue(loop, 0, () => {
        const userEvent = append(tenant, conversationId, {
          source: 'user',
          message: initial,
          action: 'message',
          args: {
            content: initial,
            image_urls: options.imageUrls ?? [],
            file_urls: [],
            wait_for_response: false,
          },
        });
        scheduleAnswer(loop, userEvent, initial);
      });
    } else {
      enqueue(loop, 0, () => setAgentState(loop, 'awaiting_user_input'));
    }
    return { alreadyRunning: false };
  }

  function acceptUserAction(
    tenant: TenantId,
    conversationId: string,
    raw: unknown,
  ): { ok: true; event: StoredEvent } | { ok: false; reason: string } {
    if (closed) return { ok: false, reason: 'the service is shutting down' };
    const parsed = parseUserAction(raw);
    if ('error' in parsed) return { ok: false, reason: parsed.error };
    if (!store.getConversation(tenant, conversationId))
      return { ok: false, reason: 'conversation not found' };
    const key = loopKey(tenant, conversationId);
    touch(tenant, conversationId);
    if (parsed.kind === 'message') {
      const echo = append(tenant, conversationId, {
        source: 'user',
        message: parsed.content,
        action: 'message',
        args: {
          content: parsed.content,
          image_urls: parsed.imageUrls,
          file_urls: parsed.fileUrls,
          wait_for_response: false,
        },
      });
      // A message to a stopped conversation wakes its agent, which answers once it is ready.
      if (!loops.has(key)) start(tenant, conversationId);
      const loop = loops.get(key);
      if (loop) scheduleAnswer(loop, echo, parsed.content);
      return { ok: true, event: echo };
    }
    const requested = parsed.agentState;
    const echo = append(tenant, conversationId, {
      source: 'user',
      message: `Agent state changed to ${requested}`,
      action: 'change_agent_state',
      args: { agent_state: requested, thought: '' },
    });
    const loop = loops.get(key);
    if (requested === 'stopped') {
      if (loop) {
        setAgentState(loop, 'stopped', echo.id);
        stopLoop(loop);
      }
      return { ok: true, event: echo };
    }
    if (!loop) {
      start(tenant, conversationId);
      return { ok: true, event: echo };
    }
    enqueue(loop, 0, () => {
      if (requested === 'paused') {
        setAgentState(loop, 'paused', echo.id);
      } else {
        // running / user_confirmed / user_rejected: acknowledge, then wait for the user again.
        setAgentState(loop, requested, echo.id);
        setAgentState(loop, 'awaiting_user_input', echo.id);
      }
    });
    return { ok: true, event: echo };
  }

  /** Like the real server's close_session: the agent's last stored state is `stopped`, then the loop ends. */
  function stop(tenant: TenantId, conversationId: string): boolean {
    const loop = loops.get(loopKey(tenant, conversationId));
    if (!loop) return false;
    try {
      setAgentState(loop, 'stopped');
    } finally {
      stopLoop(loop);
    }
    return true;
  }

  return {
    start,
    isRunning: (tenant, conversationId) => loops.has(loopKey(tenant, conversationId)),
    acceptUserAction,
    stop,
    remove(tenant, conversationId) {
      stop(tenant, conversationId);
      const key = loopKey(tenant, conversationId);
      const subscribers = removalListeners.get(key);
      removalListeners.delete(key);
      for (const listener of subscribers ?? []) {
        try {
          listener();
        } catch (error) {
          logger.error({ err: error }, 'removal listener failed');
        }
      }
    },
    onRemoved(tenant, conversationId, listener) {
      const key = loopKey(tenant, conversationId);
      let set = removalListeners.get(key);
      if (!set) {
        set = new Set();
        removalListeners.set(key, set);
      }
      set.add(listener);
      return () => {
        const current = removalListeners.get(key);
        if (!current) return;
        current.delete(listener);
        if (current.size === 0) removalListeners.delete(key);
      };
    },
    announceTitle(tenant, conversationId, title) {
      publish(loopKey(tenant, conversationId), titleStatusUpdate(conversationId, title));
    },
    onEvent(tenant, conversationId, listener) {
      const key = loopKey(tenant, conversationId);
      let set = listeners.get(key);
      if (!set) {
        set = new Set();
        listeners.set(key, set);
      }
      set.add(listener);
      return () => {
        const current = listeners.get(key);
        if (!current) return;
        current.delete(listener);
        if (current.size === 0) listeners.delete(key);
      };
    },
    connectionCount: (tenant, conversationId) => connections.get(loopKey(tenant, conversationId)) ?? 0,
    addConnection(tenant, conversationId) {
      const key = loopKey(tenant, conversationId);
      connections.set(key, (connections.get(key) ?? 0) + 1);
    },
    removeConnection(tenant, conversationId) {
      const key = loopKey(tenant, conversationId);
      const count = (connections.get(key) ?? 0) - 1;
      if (count > 0) connections.set(key, count);
      else connections.delete(key);
    },
    tenantForSessionKey(conversationId, presentedKey) {
      if (!deps.nestedRuntime || presentedKey === undefined || presentedKey === '') return null;
      for (const loop of loops.values()) {
        if (loop.conversationId !== conversationId || loop.sessionApiKey === null) continue;
        if (keysEqual(loop.sessionApiKey, presentedKey)) return loop.tenant;
      }
      return null;
    },
    async close() {
      if (closed) return;
      // Stop every loop while the store is still open, so no conversation stays RUNNING on disk.
      for (const loop of [...loops.values()]) stopLoop(loop);
      closed = true;
      listeners.clear();
      removalListeners.clear();
      connections.clear();
    },
  };
}
