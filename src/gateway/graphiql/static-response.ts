/**
 * Answers for static bytes held in memory (GraphiQL's page and assets): content negotiation of
 * brotli and gzip from Accept-Encoding, compressed copies made once and kept, entity tags with
 * `If-None-Match` -> 304, and HEAD answered like GET without the body.
 *
 * Compression runs on first request of each (asset, encoding), on libuv's thread pool (async zlib),
 * so it never blocks the event loop and costs nothing at start-up or in processes that never serve
 * a browser. Concurrent first requests share one compression.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlibConstants } from 'node:zlib';

/** Content codings the gateway produces, in order of preference at equal quality. */
export type ContentCoding = 'br' | 'gzip' | 'identity';

/**
 * Brotli quality 5: measured on GraphiQL's 8.8 MB of JS and CSS on the 2-core bench machine, quality 5
 * gave 2.14 MB in ~0.75 s of CPU (4: 2.31 MB / 0.44 s; 6: 2.11 MB / 1.06 s; 8: 2.08 MB / 2.9 s;
 * 11 takes tens of seconds). gzip level 6 (zlib's default) gave 2.41 MB in ~0.74 s; level 9 saved 0.4%
 * for nearly twice the time.
 */
const BROTLI_QUALITY = 5;
/** zlib's default level; see {@link BROTLI_QUALITY} for the measurements. */
const GZIP_LEVEL = 6;
/** A compressed copy is served only when it is at least this much smaller (else identity). */
const MIN_SAVING = 0.1;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * The coding to answer with, from an `Accept-Encoding` header (RFC 9110 §12.5.3): the acceptable
 * coding with the highest q-value, brotli before gzip on a tie; identity when neither is acceptable.
 * `*` covers codings the header does not name; `q=0` refuses.
 */
export function negotiateEncoding(acceptEncoding: string | null): ContentCoding {
  if (!acceptEncoding) return 'identity';
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.trim().split('=');
      if (key === 'q') q = Number(value);
    }
    weights.set(name, Number.isFinite(q) ? q : 0);
  }
  const weight = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  let best: ContentCoding = 'identity';
  let bestWeight = 0;
  for (const coding of ['br', 'gzip'] as const) {
    const q = weight(coding);
    if (q > bestWeight) {
      best = coding;
      bestWeight = q;
    }
  }
  return best;
}

/**
 * Whether an `If-None-Match` header matches an entity tag (weak comparison, as RFC 9110 §13.1.2
 * prescribes for If-None-Match).
 */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => opaque(candidate) === opaque(etag));
}

/** Hex SHA-256 prefix used in file names and entity tags (64 bits: collisions are not a concern). */
function contentHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** One representation of a static body. */
export interface Representation {
  coding: ContentCoding;
  body: Uint8Array<ArrayBuffer>;
  etag: string;
}

/** Static bytes with their lazily made, memoized compressed copies. */
export class StaticBody {
  readonly hash: string;
  readonly identity: Representation;
  readonly #compressed = new Map<'br' | 'gzip', Promise<Representation>>();

  /**
   * @param bytes the body
   * @param compressible false for formats that are already compressed (images): never compressed
   */
  constructor(
    readonly bytes: Uint8Array<ArrayBuffer>,
    readonly compressible = true,
  ) {
    this.hash = contentHash(bytes);
    this.identity = { coding: 'identity', body: bytes, etag: `"${this.hash}"` };
  }

  /** The representation for a negotiated coding; identity when compressing would not pay. */
  representation(coding: ContentCoding): Promise<Representation> {
    if (coding === 'identity' || !this.compressible) return Promise.resolve(this.identity);
    let pending = this.#compressed.get(coding);
    if (!pending) {
      pending = this.#compress(coding);
      this.#compressed.set(coding, pending);
    }
    return pending;
  }

  async #compress(coding: 'br' | 'gzip'): Promise<Representation> {
    const body =
      coding === 'br'
        ? await brotli(this.bytes, {
            params: {
              [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
              [zlibConstants.BROTLI_PARAM_SIZE_HINT]: this.bytes.byteLength,
            },
          })
        : await gzipAsync(this.bytes, { level: GZIP_LEVEL });
    if (body.byteLength > this.bytes.byteLength * (1 - MIN_SAVING)) return this.identity;
    return { coding, body, etag: `"${this.hash}-${coding}"` };
  }
}

/** How {@link staticResponse} answers. */
export interface StaticResponseOptions {
  contentType: string;
  cacheControl: string;
  /** Request headers the answer depends on besides Accept-Encoding (e.g. `Accept`). */
  vary?: readonly string[];
}

/**
 * The answer to a GET or HEAD for `body`: the negotiated representation with Content-Encoding,
 * Content-Length, ETag, Cache-Control and Vary; 304 (no body) when If-None-Match matches; no body for
 * HEAD. Pass Yoga's `fetchAPI.Response` as `ResponseClass`. Vary always names Accept-Encoding, even for a body that is never compressed, so a shared
 * cache never hands one client's representation to another.
 */
export async function staticResponse(
  request: Request,
  body: StaticBody,
  options: StaticResponseOptions,
  ResponseClass: typeof Response = Response,
): Promise<Response> {
  const representation = await body.representation(negotiateEncoding(request.headers.get('accept-encoding')));
  const headers: Record<string, string> = {
    'cache-control': options.cacheControl,
    etag: representation.etag,
    vary: [...(options.vary ?? []), 'Accept-Encoding'].join(', '),
  };
  if (etagMatches(request.headers.get('if-none-match'), representation.etag)) {
    return new ResponseClass(null, { status: 304, headers });
  }
  headers['content-type'] = options.contentType;
  headers['content-length'] = String(representation.body.byteLength);
  headers['x-content-type-options'] = 'nosniff';
  if (representation.coding !== 'identity') headers['content-encoding'] = representation.coding;
  // Yoga's Response (fetchAPI) writes a buffer body to the socket in one go.
  return new ResponseClass(request.method === 'HEAD' ? null : representation.body, { status: 200, headers });
}
