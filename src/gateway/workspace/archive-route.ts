/**
 * `GET /workspace-archive/<token>`: the archive link a browser opens (archive-links.ts). The token is
 * opened, the caller's credential it carries binds an upstream session, and the upstream's archive is
 * streamed through as it arrives (never held whole in memory). One credential streams at most
 * `archivesPerCredential` archives at once (429 RATE_LIMITED beyond), so one tenant cannot hold every
 * upstream connection with downloads. A refusal or an upstream failure is a JSON error with its code
 * and a matching status, never an upstream body; a failure after the first byte cuts the download.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
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

/** Serves archive links; `links` opens them, `upstream` reads the archive for the link's caller. */
export function useWorkspaceArchiveRoute(
  links: ArchiveLinks,
  upstream: Upstream,
  archivesPerCredential: number,
): Plugin {
  const streaming = new Map<string, number>();
  // A key only this process uses: the counts never leave it.
  const salt = `${process.pid}:${Math.random()}`;
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (!url.pathname.startsWith(ARCHIVE_PATH_PREFIX)) return;
      const answer = (code: ErrorCode, message?: string, headers: Record<string, string> = {}) =>
        endResponse(
          new fetchAPI.Response(
            JSON.stringify({
              errors: [{ message: message ?? ERROR_CATALOGUE[code].message, extensions: { code } }],
            }),
            {
              status: STATUS_OF[code] ?? 502,
              headers: {
                'content-type': 'application/json; charset=utf-8',
                'cache-control': 'no-store',
                ...headers,
              },
            },
          ),
        );
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
        return;
      }
      let grant: ReturnType<ArchiveLinks['open']>;
      try {
        grant = links.open(url.pathname.slice(ARCHIVE_PATH_PREFIX.length));
      } catch (error) {
        answer(codeOf(error), (error as Error).message);
        return;
      }
      const key = credentialKey(grant.credentials, salt);
      const held = streaming.get(key) ?? 0;
      if (held >= archivesPerCredential) {
        answer(
          'RATE_LIMITED',
          `At most ${archivesPerCredential} archives may download at once per credential.`,
          {
            'retry-after': '5',
          },
        );
        return;
      }
      streaming.set(key, held + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const now = (streaming.get(key) ?? 1) - 1;
        if (now > 0) streaming.set(key, now);
        else streaming.delete(key);
      };
      return (async () => {
        try {
          const archive = await upstream
            .forCaller(grant.credentials, request.signal)
            .openWorkspaceArchive(grant.conversationId);
          const headers = {
            'content-type': archive.contentType,
            'content-disposition': `attachment; filename="${archive.fileName}"`,
            'cache-control': 'no-store',
            'x-content-type-options': 'nosniff',
          };
          if (request.method === 'HEAD') {
            await archive.body.cancel().catch(() => {});
            release();
            endResponse(new fetchAPI.Response(null, { status: 200, headers }));
            return;
          }
          endResponse(
            new fetchAPI.Response(releasingStream(archive.body, release), { status: 200, headers }),
          );
        } catch (error) {
          release();
          answer(codeOf(error));
        }
      })();
    },
  };
}

/** `body` passed through unchanged, calling `release` once it ends, fails or is cancelled. */
function releasingStream(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason).catch(() => {});
    },
  });
}

function codeOf(error: unknown): ErrorCode {
  const code = error instanceof GraphQLError ? error.extensions.code : undefined;
  return typeof code === 'string' ? (code as ErrorCode) : 'UPSTREAM_ERROR';
}
