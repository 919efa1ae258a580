/**
 * The catch-up of one subscriber that resumes after a position, whichever API: it attached to the
 * shared socket first (its live events are held, subscriber-queue.ts), waits until the socket is live,
 * then has the adapter read the stored events after its position, with the subscriber's own
 * credential; the adapter's order merges the read with the held events. The read began after the
 * socket was live, so the two overlap and, merged, leave no gap and no repeat.
 *
 * Also the one place a failed read gets its code: a catch-up's (the subscriber ends) and a
 * reconnect's gap read (the streams end, or the connection is dropped and tried again).
 */
import { UpstreamError } from '../failures.ts';
import { BridgeError } from '../port/bridge-error.ts';
import { ConversationNotFoundError } from '../port/errors.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { LiveOrder, SocketDriver } from './live-adapter.ts';
import type { Subscriber } from './subscriber-queue.ts';

/** What a catch-up needs from the shared socket it runs beside (shared-socket.ts). */
export interface CatchUpSource<P> {
  readonly order: LiveOrder<P>;
  readonly driver: SocketDriver<P>;
  /** Events the socket released so far. */
  readonly released: number;
  /** Resolves once live events flow; rejects when the socket ends first. */
  ready(): Promise<void>;
}

/** Where the subscriber attached: its position, the socket's last one then, and the socket's count. */
export interface CatchUpStart<P> {
  after: P;
  attachedAt: P | null;
  releasedAtAttach: number;
}

/** Reads and merges the catch-up of `subscriber`; ends it with a coded error when the read fails. */
export async function catchUp<P>(
  source: CatchUpSource<P>,
  subscriber: Subscriber<P>,
  start: CatchUpStart<P>,
): Promise<void> {
  try {
    await source.ready();
  } catch {
    return; // the socket ended, and the subscriber with it
  }
  if (subscriber.isDone()) return;
  const releasedBeforeRead = source.released - start.releasedAtAttach;
  const abort = subscriber.abortOnEnd();
  let read: readonly ConversationEvent[];
  try {
    read = await source.driver.readAfter(start.after, abort.signal);
  } catch (error) {
    subscriber.fail(catchUpError(error));
    return;
  }
  const seam = { after: start.after, attachedAt: start.attachedAt, releasedBeforeRead };
  subscriber.finishCatchUp((held) => source.order.mergeCatchUp(read, held, seam));
}

/** A failed catch-up read as the code the subscriber's stream ends with. */
function catchUpError(error: unknown): BridgeError {
  if (error instanceof BridgeError) return error;
  if (error instanceof ConversationNotFoundError) return new BridgeError('CONVERSATION_NOT_FOUND');
  if (isRefusedKey(error)) return new BridgeError('UNAUTHENTICATED');
  if (error instanceof UpstreamError && error.code === 'UPSTREAM_TIMEOUT') {
    return new BridgeError('UPSTREAM_TIMEOUT', "The conversation's stored events did not arrive in time.");
  }
  return new BridgeError('CONVERSATION_UNREACHABLE', "The conversation's stored events cannot be read.");
}

/**
 * A failed gap read of a reconnect as the code every stream of the socket ends with, or null when the
 * connection is dropped and tried again (released without the read, the stream would have a gap). The
 * socket had been open, so a conversation gone now was deleted.
 */
export function gapReadError(error: unknown): BridgeError | null {
  if (error instanceof BridgeError) return error;
  if (error instanceof ConversationNotFoundError) return new BridgeError('CONVERSATION_DELETED');
  if (isRefusedKey(error)) return new BridgeError('UNAUTHENTICATED');
  return null;
}

/** The upstream refused the caller's key (401, or 403 for a key it knows but will not take here). */
export function isRefusedKey(error: unknown): boolean {
  return error instanceof UpstreamError && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN');
}
