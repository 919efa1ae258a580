/**
 * The step scheduler of the agent: per conversation, a FIFO of timed steps with one timer at most, so
 * the order of a conversation's events is deterministic whatever the timings. Stopping or deleting a
 * conversation cancels its pending steps; `close()` cancels all and accepts no more.
 */
import type pino from 'pino';
import type { TenantId } from './auth.ts';
import { conversationKey } from './live-hub.ts';

interface TimedStep {
  delayMs: number;
  run: () => void;
}

interface StepQueue {
  conversationId: string;
  steps: TimedStep[];
  timer: NodeJS.Timeout | null;
}

/** Timed steps per conversation. */
export class StepScheduler {
  readonly #queues = new Map<string, StepQueue>();
  readonly #logger: pino.Logger;
  #closed = false;

  constructor(logger: pino.Logger) {
    this.#logger = logger;
  }

  /** Runs `run` `delayMs` after the conversation's previous step has run (or now, when none is pending). */
  enqueue(tenant: TenantId, conversationId: string, delayMs: number, run: () => void): void {
    if (this.#closed) return;
    const key = conversationKey(tenant, conversationId);
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = { conversationId, steps: [], timer: null };
      this.#queues.set(key, queue);
    }
    queue.steps.push({ delayMs, run });
    this.#pump(key, queue);
  }

  /** Drops the conversation's pending steps and its timer. */
  cancel(tenant: TenantId, conversationId: string): void {
    const key = conversationKey(tenant, conversationId);
    const queue = this.#queues.get(key);
    if (!queue) return;
    if (queue.timer !== null) clearTimeout(queue.timer);
    this.#queues.delete(key);
  }

  /** Cancels every conversation's steps; later ones are ignored. */
  close(): void {
    for (const queue of this.#queues.values()) if (queue.timer !== null) clearTimeout(queue.timer);
    this.#queues.clear();
    this.#closed = true;
  }

  #pump(key: string, queue: StepQueue): void {
    if (queue.timer !== null) return;
    const step = queue.steps.shift();
    if (!step) {
      this.#queues.delete(key);
      return;
    }
    queue.timer = setTimeout(() => {
      queue.timer = null;
      // Cancelled meanwhile (the timer is cleared too; this also covers a queue replaced under the key).
      if (this.#queues.get(key) !== queue) return;
      try {
        step.run();
      } catch (error) {
        // A failing step (for example a store write after shutdown began) must not kill the process.
        this.#logger.error({ err: error, conversationId: queue.conversationId }, 'agent step failed');
      }
      if (this.#queues.get(key) === queue) this.#pump(key, queue);
    }, step.delayMs);
  }
}
