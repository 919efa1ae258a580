/**
 * `GET /workspace-archive/<token>`: the archive link a browser opens (archive-links.ts). The token is
 * opened, the caller's credential it carries binds an upstream session, and the upstream's archive is
 * piped through as it arrives (never held whole in memory). One credential streams at most
 * `archivesPerCredential` archives at once (429 RATE_LIMITED beyond), so one tenant cannot hold every
 * upstream connection with downloads; an archive past `archiveMaxBytes` is cut there. A refusal or an
 * upstream failure before the first byte is a JSON error with its code and a matching status, never an
 * upstream body; a failure after it resets the connection, so a browser reports a failed download
 * instead of saving a cut archive as if it were whole.
 *
 * Served on the node request, before Yoga: Yoga's fetch-API response could not end the connection
 * when a streamed body fails midway (it leaves the response open and the client waiting).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GraphQLError } from 'graphql';
import { ERROR_CATALOGUE, type ErrorCode } from '../../errors.ts';
import { credentialKey } from '../../upstream/credential-key.ts';
import type { Upstream } from '../../upstream/port/upstream.ts';
import { ARCHIVE_PATH_PREFIX, type ArchiveLinks } from './archive-links.ts';

/** The HTTP status of each code an archive download can fail with; anything else is a 502. */
const STATUS_OF: Partial<Record<ErrorCode, number>> = {
  ARCHIVE_LINK_INVALID: 403,
  ARCHIVE_LINK_EXPIRED: 410,
  RATE_LIMITED: 429,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  CONVERSATION_NOT_FOUND: 404,
  WORKSPACE_NOT_RUNNING: 409,
  NOT_ON_THIS_API: 501,
  UPSTREAM_ROUTE_MISSING: 501,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_TIMEOUT: 504,
  GATEWAY_SHUTTING_DOWN: 503,
};

/** Limits of the archive downloads. */
export interface ArchiveRouteLimits {
  archivesPerCredential: number;
  archiveMaxBytes: number;
}

/** Answers archive links on the node server; `tryAnswer` is false for any other path. */
export interface ArchiveRoute {
  tryAnswer(req: IncomingMessage, res: ServerResponse): boolean;
}

/** Serves archive links: `links` opens them, `upstream` reads the archive for the link's caller. */
export function createArchiveRoute(
  links: ArchiveLinks,
  upstream: Upstream,
  limits: ArchiveRouteLimits,
): ArchiveRoute {
  const streaming = new Map<string, number>();
  // A key only this process uses: the counts never leave it.
  const salt = `${process.pid}:${Math.random()}`;

  const answer = (
    res: ServerResponse,
    code: ErrorCode,
    message?: string,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(STATUS_OF[code] ?? 502, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
    });
    res.end(
      JSON.stringify({
        errors: [{ message: message ?? ERROR_CATALOGUE[code].message, extensions: { code } }],
      }),
    );
  };

  async function serve(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    let grant: ReturnType<ArchiveLinks['open']>;
    try {
      grant = links.open(token);
    } catch (error) {
      answer(res, codeOf(error), (error as Error).message);
      return;
    }
    const key = credentialKey(grant.credentials, salt);
    const held = streaming.get(key) ?? 0;
    if (held >= limits.archivesPerCredential) {
      answer(
        res,
        'RATE_LIMITED',
        `At most ${limits.archivesPerCredential} archives may download at once per credential.`,
        { 'retry-after': '5' },
      );
      return;
    }
    streaming.set(key, held + 1);
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    try {
      const archive = await upstream
        .forCaller(grant.credentials, abort.signal)
        .openWorkspaceArchive(grant.conversationId);
      res.writeHead(200, {
        'content-type': archive.contentType,
        'content-disposition': `attachment; filename="${archive.fileName}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      if (req.method === 'HEAD') {
        await archive.body.cancel().catch(() => {});
        res.end();
        return;
      }
      // pipeline destroys the response when the upstream body fails or passes the cap: the client
      // sees a cut connection, never a short archive that looks whole.
      await pipeline(Readable.fromWeb(archive.body as never), capped(limits.archiveMaxBytes), res).catch(
        () => {},
      );
    } catch (error) {
      if (res.headersSent) res.destroy();
      else answer(res, codeOf(error));
    } finally {
      const now = (streaming.get(key) ?? 1) - 1;
      if (now > 0) streaming.set(key, now);
      else streaming.delete(key);
    }
  }

  return {
    tryAnswer(req, res) {
      // Asked of every request the server takes: the prefix first, the path's split only for a link.
      const url = req.url ?? '';
      if (!url.startsWith(ARCHIVE_PATH_PREFIX)) return false;
      const path = url.split('?')[0] ?? '';
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' });
        res.end();
        return true;
      }
      void serve(req, res, path.slice(ARCHIVE_PATH_PREFIX.length));
      return true;
    },
  };
}

/** Passes bytes through until more than `maxBytes` have gone by, then fails. */
function capped(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.byteLength;
      if (seen > maxBytes) callback(new Error(`The archive is larger than ${maxBytes} bytes.`));
      else callback(null, chunk);
    },
  });
}

function codeOf(error: unknown): ErrorCode {
  const code = error instanceof GraphQLError ? error.extensions.code : undefined;
  return typeof code === 'string' && code in ERROR_CATALOGUE ? (code as ErrorCode) : 'UPSTREAM_ERROR';
}
