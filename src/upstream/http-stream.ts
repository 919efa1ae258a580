/**
 * One streamed attempt on the wire: up to the answer's headers exactly as http-exchange.ts's (the same
 * headers, deadline, "no such route" check and status mapping), then the body handed on as a web
 * ReadableStream that reads from the socket only as its reader pulls: nothing is buffered beyond the
 * chunk in hand, so a workspace archive of any size passes through, and a file is read only as far as
 * the caller wants it. A failure of the body after the headers (the connection cut, a timeout) errors
 * the stream with a coded error (failures.ts), never an uncaught one.
 */
import type { Dispatcher } from 'undici';
import type { AttemptDeadline } from './attempt-deadline.ts';
import { abortError, mapTransportError } from './failures.ts';
import { answerRefusal, type ExchangeTarget, send, type UpstreamRequest } from './http-exchange.ts';

/** How long an attempt's deadline runs, and what the answer is asked to be. */
export interface StreamOptions {
  /**
   * `headers`: the attempt's deadline ends once the headers arrive, and only the pool's idle timeout
   * bounds the body (an archive may take minutes); `body`: the deadline bounds reading the body too
   * (a file read up to a cap).
   */
  deadline: 'headers' | 'body';
  /** The `accept` header. @default '*\/*' */
  accept?: string;
}

/** A streamed answer: its status and headers arrived, its body flows as it is read. */
export interface UpstreamStream {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  /** The declared `content-length`, null when there is none. */
  length: number | null;
  /** The bytes as they come; cancel it to stop reading (the connection is then closed). */
  body: ReadableStream<Uint8Array>;
}

/** The most of a refusal's body read to interpret it (a 4xx's JSON reason). */
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * Sends `req` once and answers its 2xx as a stream; `answered` learns the status as soon as the
 * headers arrive.
 * @throws UpstreamError for transport failures before the headers, unmapped statuses and a web page
 * where the route's answer was expected; UpstreamRejection for statuses listed in `passThroughStatuses`
 */
export async function streamExchange(
  target: ExchangeTarget,
  req: UpstreamRequest,
  options: StreamOptions,
  answered: (status: number) => void,
): Promise<UpstreamStream> {
  const { response, deadline } = await send(target, req, options.accept ?? '*/*');
  const status = response.statusCode;
  answered(status);
  const ok = status >= 200 && status < 300;
  const refusedUnread = ok ? answerRefusal(req, status, response.headers, '') : null;
  if (!ok || refusedUnread) {
    let text = '';
    try {
      text = ok ? '' : await readBounded(response.body, MAX_REFUSAL_BYTES);
    } catch (error) {
      throw mapTransportError(error, deadline.signal);
    } finally {
      response.body.destroy();
      deadline.dispose();
    }
    throw refusedUnread ?? answerRefusal(req, status, response.headers, text);
  }
  const declared = Number(response.headers['content-length']);
  return {
    status,
    headers: response.headers,
    length: Number.isSafeInteger(declared) && declared >= 0 ? declared : null,
    body: pulledStream(response.body, deadline, options.deadline === 'headers' ? req.signal : null),
  };
}

/**
 * The body as a web stream read on demand. With `caller` (the `headers` deadline), the attempt's
 * deadline ends now and only the caller's own signal still cancels the body.
 */
function pulledStream(
  body: Dispatcher.ResponseData['body'],
  deadline: AttemptDeadline,
  caller: AbortSignal | null | undefined,
): ReadableStream<Uint8Array> {
  let settled = false;
  const onCallerAbort = () => body.destroy(abortError(caller ?? undefined));
  const settle = () => {
    settled = true;
    deadline.dispose();
    caller?.removeEventListener('abort', onCallerAbort);
  };
  if (caller !== null) {
    deadline.dispose();
    if (caller?.aborted) onCallerAbort();
    else caller?.addEventListener('abort', onCallerAbort, { once: true });
  }
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.pause();
        body.on('data', (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          // A high-water mark of 0: one chunk per read, the socket paused in between.
          if ((controller.desiredSize ?? 0) <= 0) body.pause();
        });
        body.on('end', () => {
          if (settled) return;
          settle();
          controller.close();
        });
        // Kept for the body's whole life: an 'error' with no listener would crash the process.
        body.on('error', (error: unknown) => {
          if (settled) return;
          settle();
          controller.error(mapTransportError(error, deadline.signal));
        });
      },
      pull() {
        body.resume();
      },
      cancel() {
        if (settled) return;
        settle();
        body.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Up to `maxBytes` of a body as text (UTF-8); the rest is left unread. */
async function readBounded(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= maxBytes) break;
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}
