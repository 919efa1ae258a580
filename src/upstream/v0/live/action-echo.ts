/**
 * Matching a sent user action to the upstream's echo of it (the accepted event with its id): the
 * signatures compared, the record of an action waiting for its echo and the list of those waiting.
 */
import type { UserActionRecord } from '../../../contract/v0/records.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';

/** Signature used to match an echo to the action that caused it. */
function actionSignature(action: string, detail: string): string {
  return `${action}\u0000${detail}`;
}

function signatureOfSent(action: UserActionRecord): string {
  return action.action === 'message'
    ? actionSignature('message', action.args.content)
    : actionSignature('change_agent_state', action.args.agent_state);
}

function signatureOfEcho(event: ConversationEvent): string | null {
  if (event.source !== 'user' || event.eventId === null) return null;
  if (event.kind === 'USER_MESSAGE') return actionSignature('message', event.content);
  if (event.kind === 'AGENT_STATE_CHANGE_REQUESTED')
    return actionSignature('change_agent_state', event.stateRaw);
  return null;
}

interface PendingAction {
  signature: string;
  resolve: (event: ConversationEvent) => void;
  reject: (error: Error) => void;
}

/**
 * The actions of one shared socket waiting for their echo, oldest first: identical actions are
 * matched first-in-first-out (live-events.ts's sendAction says why that is good enough). Keeps the
 * registry's `pendingActions` counter in step.
 */
export class EchoWaiters {
  #pending: PendingAction[] = [];
  readonly #counters: { pendingActions: number; timers: number };

  constructor(counters: { pendingActions: number; timers: number }) {
    this.#counters = counters;
  }

  /**
   * Sends `action` with `emit` once `ready` resolves and resolves with the upstream's echo of it.
   * Fails with UPSTREAM_TIMEOUT after `timeoutMs`, REQUEST_CANCELLED when `signal` aborts, or the
   * socket's error when it ends first.
   */
  async send(
    action: UserActionRecord,
    signal: AbortSignal | undefined,
    via: { timeoutMs: number; ready: () => Promise<void>; emit: (action: UserActionRecord) => void },
  ): Promise<ConversationEvent> {
    let timer: NodeJS.Timeout | null = null;
    let pending: PendingAction | null = null;
    try {
      const echo = new Promise<ConversationEvent>((resolve, reject) => {
        pending = { signature: signatureOfSent(action), resolve, reject };
        timer = setTimeout(
          () =>
            reject(
              new BridgeError(
                'UPSTREAM_TIMEOUT',
                'The conversation service did not accept the action in time.',
              ),
            ),
          via.timeoutMs,
        );
        this.#counters.timers++;
        const cancelled = () => reject(new BridgeError('REQUEST_CANCELLED'));
        if (signal?.aborted) cancelled();
        else signal?.addEventListener('abort', cancelled, { once: true });
      });
      // Waiting for the connection counts against the same deadline as waiting for the echo.
      await Promise.race([via.ready(), echo]);
      if (!pending) throw new Error('unreachable: pending action not set');
      this.#add(pending);
      via.emit(action);
      return await echo;
    } finally {
      if (timer) {
        clearTimeout(timer);
        this.#counters.timers--;
      }
      if (pending) this.#remove(pending);
    }
  }

  /** The action has been sent: its echo may arrive from now on. */
  #add(pending: PendingAction): void {
    this.#pending.push(pending);
    this.#counters.pendingActions++;
  }

  /** Stops waiting for `pending` (answered, timed out or cancelled); nothing when it is not waiting. */
  #remove(pending: PendingAction): void {
    const index = this.#pending.indexOf(pending);
    if (index >= 0) {
      this.#pending.splice(index, 1);
      this.#counters.pendingActions--;
    }
  }

  /** Resolves the oldest action `event` echoes, if any. */
  settle(event: ConversationEvent): void {
    const signature = signatureOfEcho(event);
    if (signature !== null) {
      const index = this.#pending.findIndex((pending) => pending.signature === signature);
      const pending = index >= 0 ? this.#pending[index] : undefined;
      if (pending) {
        this.#pending.splice(index, 1);
        this.#counters.pendingActions--;
        pending.resolve(event);
      }
    }
  }

  /** The socket ended: every waiting action fails with `failure`. */
  rejectAll(failure: Error): void {
    for (const pending of this.#pending) pending.reject(failure);
    this.#counters.pendingActions -= this.#pending.length;
    this.#pending = [];
  }
}
