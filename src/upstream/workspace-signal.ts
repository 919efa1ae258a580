/**
 * "The workspace changed", read off a conversation's live events: the agent wrote or edited a file, or
 * a command finished (which may have changed any file). Driven by the live stream the conversation
 * already has (its shared upstream socket), never by polling; bursts are debounced into one signal.
 *
 * A hand-written iterator rather than an async generator on purpose: `return()` must reach the live
 * stream at once, even while a `next()` waits for an event that may never come (a generator would
 * queue it, and the upstream socket would never be released: the bug fixed in src/upstream/api-switch.ts).
 */
import { BridgeError } from './port/bridge-error.ts';
import type { ConversationEvent } from './port/events.ts';
import type { LiveEvents } from './port/upstream.ts';
import { type UtcDateTime, utcOfDate } from './timestamps.ts';

/** One debounced signal. */
export interface WorkspaceChangeSignal {
  /** The conversation whose workspace changed. */
  conversationId: string;
  /** Files the events named, relative to the workspace root when they lie in it, sorted, once each. */
  paths: string[];
  /** The event kinds that caused it (`FILE_EDIT`, `FILE_WRITE`, `COMMAND_OUTPUT`), once each. */
  causes: string[];
  /** When the signal was sent (UTC). */
  at: UtcDateTime;
}

/** The workspace roots the two APIs' events name paths under (V1's project folder, V0's workspace). */
const WORKSPACE_ROOTS = ['/workspace/project/', '/workspace/'];

/** `path` relative to the workspace root when it lies in one of the known roots, else as sent. */
function workspaceRelative(path: string): string {
  for (const root of WORKSPACE_ROOTS) if (path.startsWith(root)) return path.slice(root.length);
  return path;
}

/** Whether an event changes the workspace, and the files it names (none: any, or unknown). */
function changedPaths(event: ConversationEvent): readonly string[] | null {
  switch (event.kind) {
    case 'FILE_EDIT':
    case 'FILE_WRITE':
      return event.paths;
    case 'COMMAND_OUTPUT':
      return [];
    default:
      return null;
  }
}

/** Debounced workspace signals from `source`; ends with the source (its terminal error last). */
export class WorkspaceSignals implements AsyncIterableIterator<WorkspaceChangeSignal | BridgeError> {
  readonly #source: LiveEvents;
  readonly #conversationId: string;
  readonly #debounceMs: number;
  #paths = new Set<string>();
  #causes = new Set<string>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Signals not taken yet: at most one (a newer one merges into it) plus a terminal error. */
  #ready: Array<WorkspaceChangeSignal | BridgeError> = [];
  #waiting: ((result: IteratorResult<WorkspaceChangeSignal | BridgeError>) => void) | null = null;
  #done = false;

  constructor(source: LiveEvents, conversationId: string, debounceMs: number) {
    this.#source = source;
    this.#conversationId = conversationId;
    this.#debounceMs = debounceMs;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const { value, done } = await this.#source.next();
        if (done || this.#done) break;
        if (value instanceof BridgeError) {
          this.#flush();
          this.#offer(value);
          break;
        }
        const paths = changedPaths(value);
        if (paths === null) continue;
        for (const path of paths) this.#paths.add(workspaceRelative(path));
        this.#causes.add(value.kind);
        this.#timer ??= setTimeout(() => this.#flush(), this.#debounceMs);
      }
    } catch {
      this.#offer(new BridgeError('UPSTREAM_ERROR'));
    }
    this.#flush();
    this.#finish();
  }

  /** Sends what accumulated as one signal (merged into an untaken one). */
  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#causes.size === 0 || this.#done) return;
    const last = this.#ready.at(-1);
    const untaken = last !== undefined && !(last instanceof BridgeError) ? last : null;
    const paths = new Set([...(untaken?.paths ?? []), ...this.#paths]);
    const causes = new Set([...(untaken?.causes ?? []), ...this.#causes]);
    this.#paths = new Set();
    this.#causes = new Set();
    const signal = {
      conversationId: this.#conversationId,
      paths: [...paths].sort(),
      causes: [...causes].sort(),
      at: utcOfDate(new Date()),
    };
    if (untaken) this.#ready[this.#ready.length - 1] = signal;
    else this.#offer(signal);
  }

  #offer(item: WorkspaceChangeSignal | BridgeError): void {
    if (this.#done) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = null;
      waiting({ value: item, done: false });
    } else {
      this.#ready.push(item);
    }
  }

  #finish(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const waiting = this.#waiting;
    this.#waiting = null;
    if (waiting && this.#ready.length === 0) {
      this.#done = true;
      waiting({ value: undefined, done: true });
    }
    this.#done = true;
  }

  next(): Promise<IteratorResult<WorkspaceChangeSignal | BridgeError>> {
    const ready = this.#ready.shift();
    if (ready !== undefined) return Promise.resolve({ value: ready, done: false });
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  async return(): Promise<IteratorResult<WorkspaceChangeSignal | BridgeError>> {
    this.#ready = [];
    this.#finish();
    await this.#source.return?.();
    return { value: undefined, done: true };
  }

  throw(): Promise<IteratorResult<WorkspaceChangeSignal | BridgeError>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
