/**
 * The deterministic agent runtime of the local service's V0 face: it makes conversations behave like
 * real OpenHands 0.53 conversations (status transitions, agent-state observations, answers to user
 * messages) without an LLM, so the gateway and its tests see realistic event streams.
 *
 * This module coordinates: what the agent answers to a message is answer.ts (the shared script,
 * agent-script.ts, as V0's events; pure functions), when each step runs is the scheduler
 * (../scheduler.ts: timed steps per conversation), and who hears of it is the live hub (../live-hub.ts:
 * a conversation's events, removal and socket count). A running
 * conversation is an AgentLoop (its agent state and, nested, its session key). Status updates and the
 * closing agent_state_changed observation are live only (the real server never stores them); every
 * other event goes through `store.appendEvent`, which assigns its id.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type pino from 'pino';
import { isJsonObject } from '../../contract/json.ts';
import type { AgentStateValue, ConversationEventRecord } from '../../contract/v0/records.ts';
import type { TenantId } from '../auth.ts';
import { conversationKey, LiveHub } from '../live-hub.ts';
import { StepScheduler } from '../scheduler.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { v0Answer } from './answer.ts';
import { v0FileSteps } from './file-steps.ts';
import type {
  AgentRuntime,
  AgentTimings,
  ConversationPatch,
  ConversationStore,
  LiveEvent,
  StartAgentOptions,
  StoredEvent,
} from './seams.ts';
import { parseUserAction } from './validation/user-action.ts';

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
  /** The conversations' workspaces: made when an agent starts, removed with the conversation. */
  workspaces: Workspaces;
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

interface AgentLoop {
  tenant: TenantId;
  conversationId: string;
  agentState: AgentStateValue;
  /** Only in nested-runtime mode. Secret. */
  sessionApiKey: string | null;
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
  const { store, timings, logger, workspaces } = deps;
  const maxRunning = Math.max(1, deps.maxRunningAgents ?? 50);
  /** Insertion order is start order, so the first entry is the oldest loop. */
  const loops = new Map<string, AgentLoop>();
  const hub = new LiveHub<LiveEvent>(logger);
  const scheduler = new StepScheduler(logger);
  let closed = false;

  function append(tenant: TenantId, conversationId: string, event: ConversationEventRecord): StoredEvent {
    const stored = store.appendEvent(tenant, conversationId, { ...event, timestamp: localEventTimestamp() });
    hub.publish(tenant, conversationId, stored);
    return stored;
  }

  function touch(tenant: TenantId, conversationId: string): void {
    store.updateConversation(tenant, conversationId, { lastUpdatedAt: new Date().toISOString() });
  }

  function setAgentState(loop: AgentLoop, state: AgentStateValue, cause?: number): void {
    loop.agentState = state;
    append(loop.tenant, loop.conversationId, agentStateObservation(state, cause));
  }

  /** Stores the conversation's runtime status (with `patch`) and sends the live status update. */
  function setRuntimeStatus(
    loop: AgentLoop,
    patch: ConversationPatch,
    runtimeStatus: string,
    message: string,
  ): void {
    const { tenant, conversationId } = loop;
    store.updateConversation(tenant, conversationId, {
      ...patch,
      runtimeStatus,
      lastUpdatedAt: new Date().toISOString(),
    });
    hub.publish(tenant, conversationId, { status_update: true, type: 'info', id: runtimeStatus, message });
  }

  /** Schedules a step of `loop`; a loop already stopped gets none. */
  function enqueue(loop: AgentLoop, delayMs: number, run: () => void): void {
    if (loops.get(conversationKey(loop.tenant, loop.conversationId)) !== loop) return;
    scheduler.enqueue(loop.tenant, loop.conversationId, delayMs, run);
  }

  /** Ends a loop: drops its pending steps, marks the conversation stopped, sends the closing observation. */
  function stopLoop(loop: AgentLoop): void {
    scheduler.cancel(loop.tenant, loop.conversationId);
    loops.delete(conversationKey(loop.tenant, loop.conversationId));
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
    hub.publish(loop.tenant, loop.conversationId, {
      message: '',
      observation: 'agent_state_changed',
      content: '',
      extras: { agent_state: 'stopped', reason: '' },
    });
  }

  /** Runs the agent's answer to a user message (answer.ts) against the store and the live hub. */
  function answer(loop: AgentLoop, userEventId: number, content: string): void {
    const { tenant, conversationId } = loop;
    const script = v0Answer(content);
    let previousId = userEventId;
    // A file step's change is made now, and its events take its place.
    const steps = script.steps.flatMap((step) =>
      step.kind === 'file' ? v0FileSteps(step.step, workspaces.ensure(conversationId)) : [step],
    );
    for (const step of steps) {
      if (step.kind === 'title') {
        store.updateConversation(tenant, conversationId, {
          title: step.title,
          lastUpdatedAt: new Date().toISOString(),
        });
        hub.publish(tenant, conversationId, titleStatusUpdate(conversationId, step.title));
        continue;
      }
      if (step.kind !== 'event') continue;
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
      if (!isJsonObject(item) || (typeof item.action !== 'string' && typeof item.observation !== 'string'))
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
    const key = conversationKey(tenant, conversationId);
    if (loops.has(key)) return { alreadyRunning: true };
    const conversation = store.getConversation(tenant, conversationId);
    if (!conversation) throw new Error('cannot start the agent of an unknown conversation');
    if (closed) return { alreadyRunning: false };
    // The sandbox starts with its workspace (made once, kept on disk).
    workspaces.ensure(conversationId);
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
      agentState: 'loading',
      sessionApiKey: deps.nestedRuntime ? randomBytes(24).toString('base64url') : null,
    };
    loops.set(key, loop);
    setRuntimeStatus(
      loop,
      { status: 'STARTING', sessionApiKey: loop.sessionApiKey },
      'STATUS$STARTING_RUNTIME',
      'Starting runtime...',
    );
    setAgentState(loop, 'loading');
    enqueue(loop, timings.startupMs, () =>
      setRuntimeStatus(loop, { status: 'RUNNING' }, 'STATUS$READY', 'Runtime is ready'),
    );
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
    const key = conversationKey(tenant, conversationId);
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
    const loop = loops.get(conversationKey(tenant, conversationId));
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
    isRunning: (tenant, conversationId) => loops.has(conversationKey(tenant, conversationId)),
    acceptUserAction,
    stop,
    remove(tenant, conversationId) {
      stop(tenant, conversationId);
      hub.removed(tenant, conversationId);
      workspaces.remove(conversationId).catch((error: unknown) => {
        logger.error({ err: error, conversationId }, 'could not remove a workspace');
      });
    },
    onRemoved: (tenant, conversationId, listener) => hub.onRemoved(tenant, conversationId, listener),
    announceTitle(tenant, conversationId, title) {
      hub.publish(tenant, conversationId, titleStatusUpdate(conversationId, title));
    },
    onEvent: (tenant, conversationId, listener) => hub.onEvent(tenant, conversationId, listener),
    connectionCount: (tenant, conversationId) => hub.connectionCount(tenant, conversationId),
    addConnection: (tenant, conversationId) => hub.addConnection(tenant, conversationId),
    removeConnection: (tenant, conversationId) => hub.removeConnection(tenant, conversationId),
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
      scheduler.close();
      hub.clear();
    },
  };
}
