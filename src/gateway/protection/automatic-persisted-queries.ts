/**
 * Automatic persisted queries (APQ), Apollo's protocol, for HTTP (GET and POST, through a Yoga plugin)
 * and graphql-ws (server.ts calls {@link AutomaticPersistedQueries.resolve} in onSubscribe):
 *
 * - `extensions.persistedQuery { version: 1, sha256Hash }` without `query`: the stored document runs;
 *   an unknown hash answers `PERSISTED_QUERY_NOT_FOUND` with the message "PersistedQueryNotFound"
 *   (HTTP 200, not cacheable), on which Apollo's link and urql's persisted exchange resend with the
 *   document.
 * - hash and `query` together: the hash must be the sha256 of the document (else
 *   `PERSISTED_QUERY_HASH_MISMATCH`, nothing stored); the document is stored once it has parsed and
 *   validated, so refused documents never take a slot.
 * - The store is shared by every caller, so a document that may carry a secret in its text is run but
 *   never stored: a mutation with a string literal (`addGitProviderToken(input: {token: "ghp_…"})`,
 *   MCP `env` values). Secrets passed as variables are fine: variables are never stored.
 *
 * Documents are kept in a {@link PersistedQueryStore} (a bounded LRU in memory by default); a second
 * level (Redis) can implement the same two methods. Only used without an allow-list: with
 * PERSISTED_OPERATIONS_FILE, limits.ts's `PersistedOperations` decides alone and nothing registers.
 */

import { createHash } from 'node:crypto';
import { type DocumentNode, GraphQLError, Kind, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { codedError, ERROR_CATALOGUE, type ErrorCode } from '../../errors.ts';

/** Where registered documents live. Implementations may be asynchronous (a shared cache). */
export interface PersistedQueryStore {
  /** The document registered under a sha256 hash (lowercase hex), or null. */
  get(hash: string): Promise<string | null> | string | null;
  /** Registers a document under its hash. May drop older entries. */
  set(hash: string, document: string): Promise<void> | void;
}

/** Documents the in-memory store keeps. `APQ_MAX_ENTRIES`; 0 turns APQ off. */
const DEFAULT_APQ_MAX_ENTRIES = 1000;
/**
 * Bytes (UTF-16 length of the documents) the in-memory store keeps in all. `APQ_MAX_BYTES`. A client's
 * whole set of operations is typically well under 1 MB; the bound keeps 1000 maximum-size bodies
 * (1 MiB each) from holding a gigabyte.
 */
const DEFAULT_APQ_MAX_BYTES = 4 * 1024 * 1024;

/** Codes clients see (the catalogue messages of the first two are what Apollo's and urql's links look for). */
type PersistedQueryCode = Extract<
  ErrorCode,
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_NOT_SUPPORTED'
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  | 'PERSISTED_QUERY_INVALID'
>;

/**
 * A least-recently-used map bounded in entries and in total document length. A Map iterates in
 * insertion order, so re-inserting on a hit makes the first key the least recently used.
 */
export class LruQueryStore implements PersistedQueryStore {
  readonly #entries = new Map<string, string>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(options: { maxEntries: number; maxBytes: number }) {
    this.#maxEntries = options.maxEntries;
    this.#maxBytes = options.maxBytes;
  }

  get(hash: string): string | null {
    const document = this.#entries.get(hash);
    if (document === undefined) return null;
    this.#entries.delete(hash);
    this.#entries.set(hash, document);
    return document;
  }

  set(hash: string, document: string): void {
    // A document larger than the whole budget would evict everything and still not fit: it runs, unstored.
    if (document.length > this.#maxBytes || this.#maxEntries === 0) return;
    const previous = this.#entries.get(hash);
    if (previous !== undefined) {
      this.#entries.delete(hash);
      this.#bytes -= previous.length;
    }
    this.#entries.set(hash, document);
    this.#bytes += document.length;
    for (const [oldest, oldDocument] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= oldDocument.length;
    }
  }

  /** Stored documents. */
  get size(): number {
    return this.#entries.size;
  }

  /** Total length of the stored documents. */
  get bytes(): number {
    return this.#bytes;
  }
}

/** Options of {@link AutomaticPersistedQueries}. */
export interface AutomaticPersistedQueriesOptions {
  /** Documents kept in memory; 0 turns APQ off (hashes answer PERSISTED_QUERY_NOT_SUPPORTED). @default DEFAULT_APQ_MAX_ENTRIES */
  maxEntries?: number;
  /** Total document length kept in memory. @default DEFAULT_APQ_MAX_BYTES */
  maxBytes?: number;
  /** Replaces the in-memory LRU (e.g. a shared cache). @default an LruQueryStore with the bounds above */
  store?: PersistedQueryStore;
}

/** The outcome of {@link AutomaticPersistedQueries.resolve}. */
export interface ResolvedQuery {
  /** The document to run (undefined when the request had neither a query nor a hash). */
  query: string | undefined;
  /** Set when the request registers a document: call {@link AutomaticPersistedQueries.register} once it validated. */
  registration: { hash: string; document: string } | null;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The APQ protocol over one store. */
export class AutomaticPersistedQueries {
  readonly #store: PersistedQueryStore;
  readonly #enabled: boolean;

  constructor(options: AutomaticPersistedQueriesOptions = {}) {
    const maxEntries = options.maxEntries ?? DEFAULT_APQ_MAX_ENTRIES;
    this.#enabled = maxEntries > 0;
    this.#store =
      options.store ?? new LruQueryStore({ maxEntries, maxBytes: options.maxBytes ?? DEFAULT_APQ_MAX_BYTES });
  }

  /**
   * The document a request (HTTP params or a graphql-ws subscribe payload) runs.
   * @throws GraphQLError PERSISTED_QUERY_NOT_FOUND, PERSISTED_QUERY_NOT_SUPPORTED,
   *   PERSISTED_QUERY_HASH_MISMATCH or PERSISTED_QUERY_INVALID
   */
  async resolve(params: { query?: unknown; extensions?: unknown }): Promise<ResolvedQuery> {
    const query = typeof params.query === 'string' && params.query !== '' ? params.query : undefined;
    const extension = persistedQueryExtension(params.extensions);
    if (extension === undefined) return { query, registration: null };
    if (!this.#enabled) {
      throw new PersistedQueryError('PERSISTED_QUERY_NOT_SUPPORTED');
    }
    const hash = checkedHash(extension);
    if (query === undefined) {
      const stored = await this.#store.get(hash);
      if (stored === null) throw new PersistedQueryError('PERSISTED_QUERY_NOT_FOUND');
      return { query: stored, registration: null };
    }
    if (sha256Hex(query) !== hash) {
      throw new PersistedQueryError('PERSISTED_QUERY_HASH_MISMATCH');
    }
    return { query, registration: { hash, document: query } };
  }

  /**
   * Stores a document that parsed and validated (`parsed`), unless it may carry a secret: see
   * {@link mayHoldSecret}. The client then simply sends it again with its hash next time.
   */
  async register(registration: { hash: string; document: string }, parsed: DocumentNode): Promise<void> {
    if (mayHoldSecret(parsed)) return;
    await this.#store.set(registration.hash, registration.document);
  }

  /**
   * The Yoga plugin: resolves in onParams (before Yoga insists on a query string) and registers after
   * a validation without errors. Keyed by the request's context object, as Yoga's own
   * persisted-operations plugin does between onParams and onParse.
   */
  plugin(): Plugin {
    const pending = new WeakMap<object, { hash: string; document: string }>();
    return {
      onParams: async ({ params, setParams, context }) => {
        let resolved: ResolvedQuery;
        try {
          resolved = await this.resolve(params);
        } catch (error) {
          throw error instanceof PersistedQueryError ? error.withHttp() : error;
        }
        if (resolved.registration) pending.set(context, resolved.registration);
        // Only a hash-only request changes its params (to the stored document).
        if (resolved.query !== undefined && resolved.query !== params.query) {
          setParams({ ...params, query: resolved.query });
        }
      },
      onValidate: ({ context, params }) => {
        const registration = pending.get(context);
        if (!registration) return;
        pending.delete(context);
        return ({ valid }) => {
          // A store failure (a shared cache that is down) must not fail the operation: the client
          // sends the document again on the next PERSISTED_QUERY_NOT_FOUND.
          if (valid) void this.register(registration, params.documentAST).catch(() => {});
        };
      },
    };
  }
}

/**
 * True when a document contains a mutation with a string literal anywhere in it. Mutations are where
 * secrets go in (provider tokens, MCP api keys and env values, messages); queries and subscriptions
 * carry ids and filters. The store is shared by all callers, so such a text must not enter it.
 */
function mayHoldSecret(document: DocumentNode): boolean {
  const hasMutation = document.definitions.some(
    (definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.operation === 'mutation',
  );
  if (!hasMutation) return false;
  let found = false;
  visit(document, {
    StringValue() {
      found = true;
    },
  });
  return found;
}

/** Lowercase hex sha256 of a document, as APQ hashes are. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function persistedQueryExtension(extensions: unknown): Record<string, unknown> | undefined {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const value = (extensions as { persistedQuery?: unknown }).persistedQuery;
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PersistedQueryError(
      'PERSISTED_QUERY_INVALID',
      'extensions.persistedQuery must be an object { version: 1, sha256Hash }.',
    );
  }
  return value as Record<string, unknown>;
}

function checkedHash(extension: Record<string, unknown>): string {
  if (extension.version !== 1) {
    throw new PersistedQueryError(
      'PERSISTED_QUERY_INVALID',
      'Unsupported persisted query version (only version 1).',
    );
  }
  const hash = typeof extension.sha256Hash === 'string' ? extension.sha256Hash.toLowerCase() : '';
  if (!SHA256_HEX.test(hash)) {
    throw new PersistedQueryError(
      'PERSISTED_QUERY_INVALID',
      'extensions.persistedQuery.sha256Hash must be 64 hexadecimal characters.',
    );
  }
  return hash;
}

/**
 * A refusal of the protocol; the HTTP status (the catalogue's) is added only for Yoga's answer, so
 * graphql-ws clients never see it.
 */
class PersistedQueryError extends GraphQLError {
  constructor(
    readonly code: PersistedQueryCode,
    message: string = ERROR_CATALOGUE[code].message,
  ) {
    super(message, { extensions: { code } });
  }

  /** The same error with Yoga's `http` extension (status and headers of the HTTP answer). */
  withHttp(): GraphQLError {
    return codedError(this.code, {
      message: this.message,
      // Apollo Server's answer: a GET that missed must not be cached by a CDN, or the retry that
      // registers the document would never reach the gateway.
      refuses: { headers: { 'cache-control': 'private, no-cache, must-revalidate' } },
    });
  }
}
