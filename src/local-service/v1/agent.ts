/**
 * The scripted agent behind every V1 conversation, as an agent server runs it: a user message is
 * appended (and, with `run`, answered), `run` works through the unanswered messages, `pause` stops
 * after the current step. Every event goes to the store first (so whatever a route acknowledged is
 * durable), then to the conversation's live listeners (the sockets). Execution status changes are
 * stored both as the conversation's field and as `ConversationStateUpdateEvent`s, as the SDK persists
 * incremental state updates.
 *
 * Timing comes from the shared step scheduler (one FIFO per conversation), the answers from answer.ts
 * (the shared script, in SDK events), the fan-out from the shared live hub.
 */
import type pino from 'pino';
import type {
  ActionEventRecord,
  ContentRecord,
  ExecutionStatusValue,
  SdkEventRecord,
} from '../../contract/v1/events.ts';
import type { TenantId } from '../auth.ts';
import { conversationKey, LiveHub } from '../live-hub.ts';
import { StepScheduler } from '../scheduler.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { type AnswerPart, v1Answer } from './answer.ts';
import {
  messageEvent,
  sdkEvent,
  stateUpdate,
  systemPromptEvent,
  userReject,
  utcTimestamp,
} from './event-factory.ts';
import type { V1Conversation } from './records.ts';
import type { V1Store } from './store.ts';

/** What {@link createV1Agent} needs. */
export interface V1AgentDeps {
  store: V1Store;
  /** The sandboxes' workspaces, which the agent's file steps change. */
  workspaces: Workspaces;
  /** From a run's start to the agent's answer to each message. */
  replyMs: number;
  logger: pino.Logger;
}

/** The outcome of `run`: the real server answers 409 to a conversation already running. */
type RunOutcome = 'started' | 'already_running' | 'not_found';

/** Creates the agent; `close()` drops every pending step. */
export function createV1Agent(deps: V1AgentDeps) {
  const { store, logger } = deps;
  const hub = new LiveHub<SdkEventRecord>(logger);
  const scheduler = new StepScheduler(logger);
  /** Unanswered user messages per conversation, oldest first (in memory: a restart leaves them unanswered). */
  const pending = new Map<string, string[]>();
  /**
   * Under a confirming policy: the action waiting for `respond_to_confirmation` and the rest of its
   * answer (in memory, like the real agent's pending action).
   */
  const held = new Map<
    string,
    { action: ActionEventRecord; rest: AnswerPart[]; final: ExecutionStatusValue }
  >();
  /** Conversations whose queue this process owns; any other gets its queue rebuilt from its log once. */
  const known = new Set<string>();
  let closed = false;

  function append(tenant: TenantId, conversationId: string, event: SdkEventRecord): SdkEventRecord {
    store.appendEvent(conversationId, event);
    hub.publish(tenant, conversationId, event);
    return event;
  }

  /** Appends a part of an answer: an event, or a deferred observation made (with its effect) now. */
  function appendPart(tenant: TenantId, conversationId: string, part: AnswerPart): void {
    append(tenant, conversationId, part.kind === 'deferred' ? part.make() : part);
  }

  /** The workspace folder of the conversation's sandbox (made when missing). */
  function workspaceOf(tenant: TenantId, conversationId: string): () => string {
    return () => {
      const sandboxId = store.getConversation(tenant, conversationId)?.sandboxId;
      if (sandboxId === undefined) throw new Error('the conversation is gone');
      return deps.workspaces.ensure(sandboxId);
    };
  }

  function setStatus(tenant: TenantId, conversationId: string, status: ExecutionStatusValue): void {
    const current = store.getConversation(tenant, conversationId);
    if (!current || current.executionStatus === status) return;
    store.updateConversation(tenant, conversationId, {
      executionStatus: status,
      updatedAt: utcTimestamp(),
    });
    append(tenant, conversationId, stateUpdate('execution_status', status));
  }

  function textOf(content: ContentRecord[]): string {
    return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  }

  /** After an answer: the next unanswered message, or the status the answer ends in. */
  function continueOrEnd(tenant: TenantId, conversationId: string, final: ExecutionStatusValue): void {
    if (final === 'finished' && pending.has(conversationKey(tenant, conversationId))) {
      scheduleNext(tenant, conversationId);
    } else {
      setStatus(tenant, conversationId, final);
    }
  }

  /**
   * Answers the oldest unanswered message after replyMs, then the next, then ends `finished` (or
   * `error`). Under a confirming policy the answer stops at its first action, `waiting_for_confirmation`.
   */
  function scheduleNext(tenant: TenantId, conversationId: string): void {
    const key = conversationKey(tenant, conversationId);
    scheduler.enqueue(tenant, conversationId, deps.replyMs, () => {
      const queue = pending.get(key) ?? [];
      const message = queue.shift();
      if (queue.length === 0) pending.delete(key);
      if (message === undefined) return continueOrEnd(tenant, conversationId, 'finished');
      const answer = v1Answer(message, workspaceOf(tenant, conversationId));
      if (answer.title !== null) {
        store.updateConversation(tenant, conversationId, { title: answer.title, updatedAt: utcTimestamp() });
      }
      const confirming = store.getConversation(tenant, conversationId)?.confirmationPolicy !== 'NeverConfirm';
      const at = answer.parts.findIndex((e) => e.kind === 'ActionEvent');
      const action = answer.parts[at];
      if (confirming && action?.kind === 'ActionEvent') {
        for (const part of answer.parts.slice(0, at + 1)) appendPart(tenant, conversationId, part);
        held.set(key, { action, rest: answer.parts.slice(at + 1), final: answer.finalStatus });
        setStatus(tenant, conversationId, 'waiting_for_confirmation');
        return;
      }
      for (const part of answer.parts) appendPart(tenant, conversationId, part);
      continueOrEnd(tenant, conversationId, answer.finalStatus);
    });
  }

  /**
   * The user messages after the agent last spoke: what a run must answer when memory has no queue
   * (after a restart), as a real agent answers the unanswered end of its persisted history.
   */
  function unansweredInLog(conversationId: string): string[] {
    const events = store.listEvents(conversationId, {
      kind: null,
      source: null,
      timestampGte: null,
      timestampLt: null,
    });
    const unanswered: string[] = [];
    for (const event of events) {
      if (event.kind === 'MessageEvent' && event.source === 'user')
        unanswered.push(textOf(event.llm_message.content));
      else if (
        event.source === 'agent' ||
        event.kind === 'ObservationEvent' ||
        event.kind === 'ConversationErrorEvent'
      ) {
        unanswered.length = 0;
      }
    }
    return unanswered;
  }

  /**
   * The first time this process touches a conversation it did not begin (it was begun before a
   * restart), its unanswered messages are read from the log, so they keep their turn.
   */
  function adopt(tenant: TenantId, conversationId: string): void {
    const key = conversationKey(tenant, conversationId);
    if (known.has(key)) return;
    known.add(key);
    const unanswered = unansweredInLog(conversationId);
    if (unanswered.length > 0 && !pending.has(key)) pending.set(key, unanswered);
  }

  function run(tenant: TenantId, conversationId: string): RunOutcome {
    const conversation = store.getConversation(tenant, conversationId);
    if (!conversation) return 'not_found';
    if (conversation.executionStatus === 'running') return 'already_running';
    if (closed) return 'started';
    adopt(tenant, conversationId);
    setStatus(tenant, conversationId, 'running');
    scheduleNext(tenant, conversationId);
    return 'started';
  }

  return {
    /**
     * A new conversation's first events: the system prompt, then the initial message, which always
     * runs the agent (the agent server starts conversations with `run=True`).
     */
    begin(conversation: V1Conversation, initialMessage: ContentRecord[] | null): void {
      const { tenant, id } = conversation;
      known.add(conversationKey(tenant, id));
      append(tenant, id, systemPromptEvent());
      if (initialMessage !== null && initialMessage.length > 0) this.send(tenant, id, initialMessage, true);
    },

    /** Appends a user message; runs the agent when `run` (unless it runs already: it will get to it). */
    send(
      tenant: TenantId,
      conversationId: string,
      content: ContentRecord[],
      runNow: boolean,
    ): SdkEventRecord {
      const key = conversationKey(tenant, conversationId);
      adopt(tenant, conversationId);
      const event = append(tenant, conversationId, messageEvent('user', content));
      pending.set(key, [...(pending.get(key) ?? []), textOf(content)]);
      const status = store.getConversation(tenant, conversationId)?.executionStatus;
      if (status === 'running') {
        // The loop in progress answers it after the messages before it.
      } else if (runNow) {
        run(tenant, conversationId);
      }
      return event;
    },

    run,

    /**
     * `pause` (a PauseEvent; the run stops before its next step) or `interrupt` (an InterruptEvent; the
     * step in flight is cancelled too). The scripted agent's steps are atomic, so both stop at once;
     * unanswered messages wait for the next run.
     */
    pause(
      tenant: TenantId,
      conversationId: string,
      kind: 'PauseEvent' | 'InterruptEvent' = 'PauseEvent',
    ): boolean {
      if (!store.getConversation(tenant, conversationId)) return false;
      append(tenant, conversationId, sdkEvent({ source: 'user', kind }));
      scheduler.cancel(tenant, conversationId);
      setStatus(tenant, conversationId, 'paused');
      return true;
    },

    /**
     * `respond_to_confirmation`: accepting runs the held action (its observation follows), rejecting
     * answers it with a UserRejectObservation; then the agent goes on. Nothing held: nothing happens.
     */
    respond(tenant: TenantId, conversationId: string, accept: boolean, reason: string | null): void {
      const key = conversationKey(tenant, conversationId);
      const waiting = held.get(key);
      if (!waiting) return;
      held.delete(key);
      setStatus(tenant, conversationId, 'running');
      if (accept) {
        for (const part of waiting.rest) appendPart(tenant, conversationId, part);
      } else {
        append(tenant, conversationId, userReject(waiting.action, reason ?? 'User rejected the action'));
      }
      continueOrEnd(tenant, conversationId, waiting.final);
    },

    /** Sets the confirmation policy (stored, and announced as a state update). */
    setPolicy(tenant: TenantId, conversationId: string, kind: string): boolean {
      const updated = store.updateConversation(tenant, conversationId, { confirmationPolicy: kind });
      if (!updated) return false;
      append(tenant, conversationId, stateUpdate('confirmation_policy', { kind }));
      return true;
    },

    /** The sandbox stops (paused or deleted): pending steps are dropped, a run in progress is paused. */
    halt(tenant: TenantId, conversationId: string): void {
      scheduler.cancel(tenant, conversationId);
      if (store.getConversation(tenant, conversationId)?.executionStatus === 'running') {
        setStatus(tenant, conversationId, 'paused');
      }
      hub.removed(tenant, conversationId);
    },

    /** Forgets the conversation's live side; its sockets are closed by their onRemoved listeners. */
    forget(tenant: TenantId, conversationId: string): void {
      scheduler.cancel(tenant, conversationId);
      pending.delete(conversationKey(tenant, conversationId));
      held.delete(conversationKey(tenant, conversationId));
      known.delete(conversationKey(tenant, conversationId));
      hub.removed(tenant, conversationId);
    },

    onEvent: (tenant: TenantId, conversationId: string, listener: (event: SdkEventRecord) => void) =>
      hub.onEvent(tenant, conversationId, listener),
    onRemoved: (tenant: TenantId, conversationId: string, listener: () => void) =>
      hub.onRemoved(tenant, conversationId, listener),

    close(): void {
      closed = true;
      scheduler.close();
      hub.clear();
      pending.clear();
      held.clear();
      known.clear();
    },
  };
}

/** The V1 agent of one local service. */
export type V1Agent = ReturnType<typeof createV1Agent>;
