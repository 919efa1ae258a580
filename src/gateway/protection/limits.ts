/**
 * gateway/protection/: what protects the gateway and its upstream from callers. This room holds the
 * request limits (this file), the per-operation budget (operation-cost.ts), the Origin and Host
 * checks (origin-check.ts), the rate limit (rate-limit.ts), the stream quota (stream-quota.ts),
 * suggestion stripping (suggestions.ts), variable errors (variable-errors.ts), the deadline
 * (deadline.ts, operation-signal.ts), the batching refusal (batching.ts) and automatic persisted
 * queries (automatic-persisted-queries.ts). It imports no other room; hardening.ts assembles it.
 *
 * Request limits in front of the schema: graphql-armor's query limits (depth, aliases, tokens,
 * directives, cost) with coded errors, a request body size limit, CSRF prevention for the content
 * types a browser may send cross-site without a preflight, CORS, switching introspection and field
 * suggestions off, and an optional persisted-operations allow-list (HTTP and graphql-ws alike).
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { type GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationContext } from 'graphql';
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import { codedError, type RefusalCode, refusalBody, refusalStatus } from '../../errors.ts';
import { CREDENTIAL_HEADERS } from '../../upstream/credentials.ts';

/** graphql-armor limits of one operation. */
export interface QueryLimits {
  /** Deepest field nesting (introspection excluded). `GRAPHQL_MAX_DEPTH`. @default 10 */
  maxDepth: number;
  /** Aliases in one operation. `GRAPHQL_MAX_ALIASES`. @default 15 */
  maxAliases: number;
  /** Lexical tokens in one document. `GRAPHQL_MAX_TOKENS`. @default 2000 */
  maxTokens: number;
  /** Directives in one operation. `GRAPHQL_MAX_DIRECTIVES`. @default 50 */
  maxDirectives: number;
  /**
   * Cost of one operation, counted once variables are known (operation-cost.ts: each field 1, times
   * the page size or number of ids it is selected under). `GRAPHQL_MAX_COST`. @default 6000
   */
  maxCost: number;
  /** Upper bound of upstream calls of one operation. `GRAPHQL_MAX_UPSTREAM_CALLS`. @default 150 */
  maxUpstreamCalls: number;
}

/**
 * Defaults sized from this schema's own operations: the deepest real query (a field of a connection's
 * node) is 4 levels by armor's count. Cost and upstream calls are measured by
 * test/gateway/operation-budget.test.ts, which prints them: a full page (`first: 100`) selecting every
 * Conversation field plus the `__typename`s Apollo, urql and Relay add costs 3,102, a full
 * `nodes(ids:)` (100 ids) 2,202, both in one operation 5,303: 6,000 lets that through while two
 * aliased full pages (6,204) are refused. One full `nodes(ids:)` makes 100 upstream calls; 150 leaves
 * room for lists and lookups beside it and refuses two of them (the 3,000-id `nodes`
 * made ~1,070 calls and starved every other tenant).
 */
export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2000,
  maxDirectives: 50,
  maxCost: 6000,
  maxUpstreamCalls: 150,
};

/** Largest accepted request body. `MAX_BODY_BYTES`. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Code put on every armor rejection (armor itself sets none). */
export const QUERY_LIMIT_CODE = 'QUERY_LIMIT_EXCEEDED' satisfies RefusalCode;

/**
 * graphql-armor's plugins with coded errors. The cost is not armor's: it runs at validation, before
 * variables are known (see operation-cost.ts, which replaces it). `fieldSuggestions: false` also masks
 * "Did you mean ...?" hints, which otherwise leak schema parts even with introspection off.
 */
export function useQueryLimits(
  limits: Omit<QueryLimits, 'maxCost' | 'maxUpstreamCalls'>,
  options: { fieldSuggestions: boolean },
): Plugin[] {
  const onReject = [
    (_context: ValidationContext | null, error: GraphQLError) => {
      // armor builds plain GraphQLErrors; the code lets clients (and the operation log) branch on it.
      const extensions = error.extensions as Record<string, unknown>;
      extensions.code = QUERY_LIMIT_CODE;
      extensions.http = { status: refusalStatus(QUERY_LIMIT_CODE) };
      // armor prefixes every message with "Syntax Error: ", which sends users looking for a typo.
      error.message = error.message.replace(/^Syntax Error: /, '');
    },
  ];
  // Messages name the limit and its value ("Query depth limit of 10 exceeded, found 12."): the values
  // are documented anyway (docs/operations.md, Query limits), and a client needs them to fix its operation.
  const armor = new EnvelopArmor({
    maxDepth: { n: limits.maxDepth, onReject, exposeLimits: true },
    maxAliases: { n: limits.maxAliases, onReject, exposeLimits: true },
    maxTokens: { n: limits.maxTokens, onReject, exposeLimits: true },
    maxDirectives: { n: limits.maxDirectives, onReject, exposeLimits: true },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: !options.fieldSuggestions },
  });
  return armor.protect().plugins as Plugin[];
}

/** Refuses introspection (`__schema`, `__type`) at validation; `__typename` stays allowed. */
export function useIntrospectionDisabled(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

function refusal(code: RefusalCode, message: string, headers: Record<string, string> = {}) {
  return new Response(refusalBody(code, message), {
    status: refusalStatus(code),
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/**
 * Refuses bodies larger than `maxBytes` (`multipartMaxBytes` for a multipart upload) (413
 * PAYLOAD_TOO_LARGE) by their Content-Length, and bodies
 * without one (411 LENGTH_REQUIRED): a chunked body could otherwise grow without bound before the
 * JSON parser sees it. GraphQL clients send one small JSON body with a length.
 */
export function useBodyLimit(maxBytes: number, multipartMaxBytes: number = maxBytes): Plugin {
  return {
    onRequest({ request, endResponse }) {
      if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
      // A GraphQL multipart request (a file upload) has its own, larger bound: the upload limit.
      const limit = request.headers.get('content-type')?.startsWith('multipart/form-data')
        ? multipartMaxBytes
        : maxBytes;
      const length = request.headers.get('content-length');
      if (length === null) {
        if (request.headers.get('transfer-encoding') !== null) {
          endResponse(refusal('LENGTH_REQUIRED', 'Send the request body with a Content-Length.'));
        }
        return;
      }
      const bytes = Number(length);
      if (!Number.isSafeInteger(bytes) || bytes > limit) {
        endResponse(
          refusal('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`, {
            connection: 'close',
          }),
        );
      }
    },
  };
}

/** Media types a page on another site can POST without a CORS preflight. */
const SIMPLE_CONTENT_TYPES = new Set([
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
]);
/** Any of these headers proves the request was not a cross-site simple request. */
const CSRF_HEADERS = ['graphql-preflight', 'apollo-require-preflight', 'x-graphql-yoga-csrf'] as const;

/**
 * Headers that force a browser to preflight: the CSRF ones and every credential header (none is
 * CORS-safelisted). CSRF prevention lets a request carrying one through, and CORS allows exactly
 * these (besides `content-type` and `accept`), so a header the gateway reads is one a browser may send.
 */
const PREFLIGHT_HEADERS: readonly string[] = [...CSRF_HEADERS, ...CREDENTIAL_HEADERS];

/**
 * CSRF prevention: a browser on another site can POST a "simple" request (form or text body) without a
 * preflight, and the gateway may act on it with its default key. Such requests are refused (403
 * CSRF_REJECTED) unless they carry a custom header (which forces a preflight) or a credential header
 * (upstream/credentials.ts's CREDENTIAL_HEADERS, which force one too). JSON bodies and GET are
 * unaffected: GET never runs mutations, and `application/json` always needs a preflight.
 */
export function useCsrfPrevention(): Plugin {
  return {
    onRequest({ request, endResponse }) {
      if (request.method !== 'POST') return;
      const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!SIMPLE_CONTENT_TYPES.has(mediaType)) return;
      const headers = request.headers;
      if (PREFLIGHT_HEADERS.some((name) => headers.has(name))) return;
      endResponse(
        refusal(
          'CSRF_REJECTED',
          `Requests with content type ${mediaType} need a "graphql-preflight: 1" header (CSRF prevention).`,
        ),
      );
    },
  };
}

/**
 * Yoga's `cors` option from the configured origins: none (the default) sends no CORS headers, so
 * browsers on other origins cannot read answers; `['*']` allows any origin; otherwise an exact list.
 * Credentials travel in headers, never cookies, so `credentials` stays off.
 */
export function corsOption(origins: readonly string[]): YogaServerOptions<object, object>['cors'] {
  if (origins.length === 0) return false;
  return {
    origin: origins.includes('*') ? '*' : [...origins],
    credentials: false,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['content-type', 'accept', ...PREFLIGHT_HEADERS],
    maxAge: 600,
  };
}

/**
 * An allow-list of operations: `{ "<sha256 of the document>": "<document>" }` (the format of
 * graphql-codegen's persisted documents). Clients send
 * `extensions: { persistedQuery: { version: 1, sha256Hash } }` instead of `query`.
 */
export class PersistedOperations {
  readonly #byHash: Map<string, string>;

  constructor(entries: Record<string, string>) {
    this.#byHash = new Map(Object.entries(entries));
  }

  /**
   * Reads an allow-list file. Every entry's key must be the sha256 of its document, so a typo cannot
   * silently allow a different operation.
   * @throws Error naming the problem (not the file's content)
   */
  static fromFile(path: string): PersistedOperations {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error('expected a JSON object of { "<sha256>": "<document>" }');
    }
    const entries: Record<string, string> = {};
    for (const [hash, document] of Object.entries(parsed)) {
      if (typeof document !== 'string') throw new Error(`entry ${hash} is not a string`);
      if (sha256(document) !== hash) throw new Error(`entry ${hash} is not the sha256 of its document`);
      entries[hash] = document;
    }
    return new PersistedOperations(entries);
  }

  /**
   * Allows the gateway's own documents (the MCP endpoint's operations, which it sends by hash): they are
   * part of the gateway, not a client's choice, so an allow-list of clients' operations admits them.
   */
  admit(documents: Iterable<string>): void {
    for (const document of documents) this.#byHash.set(sha256(document), document);
  }

  /** Number of allowed operations. */
  get size(): number {
    return this.#byHash.size;
  }

  /** The document for a hash, or null. */
  get(hash: string): string | null {
    return this.#byHash.get(hash) ?? null;
  }

  /**
   * The document a graphql-ws `subscribe` payload names (the HTTP path goes through Yoga's plugin).
   * @throws GraphQLError PERSISTED_QUERY_ONLY / PERSISTED_QUERY_NOT_IN_LIST
   */
  resolve(payload: { query?: unknown; extensions?: unknown }): string {
    const hash = persistedHash(payload.extensions);
    if (hash === null) {
      throw codedError('PERSISTED_QUERY_ONLY');
    }
    const document = this.get(hash);
    if (document === null) {
      throw codedError('PERSISTED_QUERY_NOT_IN_LIST');
    }
    return document;
  }

  /** Yoga's persisted-operations plugin in allow-list mode (arbitrary documents refused). */
  plugin(): Plugin {
    return usePersistedOperations({
      getPersistedOperation: (hash) => this.get(hash),
      allowArbitraryOperations: false,
      customErrors: {
        persistedQueryOnly: () => codedError('PERSISTED_QUERY_ONLY', { refuses: true }),
        notFound: () => codedError('PERSISTED_QUERY_NOT_IN_LIST', { refuses: true }),
        keyNotFound: () => codedError('PERSISTED_QUERY_ONLY', { refuses: true }),
      },
    }) as Plugin;
  }
}

/** Hex sha256 of a document, as persisted-operation keys are. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function persistedHash(extensions: unknown): string | null {
  if (extensions === null || typeof extensions !== 'object') return null;
  const persisted = (extensions as { persistedQuery?: unknown }).persistedQuery;
  if (persisted === null || typeof persisted !== 'object') return null;
  const hash = (persisted as { sha256Hash?: unknown }).sha256Hash;
  return typeof hash === 'string' ? hash : null;
}

/**
 * GET requests carry `variables` and `extensions` as JSON in the query string; Yoga answers a
 * malformed one with 500 (an uncaught parse error). A client mistake gets 400 BAD_REQUEST here instead.
 */
export function useQueryStringGuard(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET' || url.search === '') return;
      for (const name of ['variables', 'extensions']) {
        const raw = url.searchParams.get(name);
        if (raw === null || raw === '') continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw);
        } catch {
          parsed = undefined;
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          endResponse(refusal('BAD_REQUEST', `The "${name}" parameter must be a JSON object.`));
          return;
        }
      }
    },
  };
}
