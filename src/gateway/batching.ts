/**
 * Batching (a JSON array of operations in one POST, as Apollo's BatchHttpLink sends) is refused with
 * its own code, 400 BATCHING_NOT_SUPPORTED, instead of Yoga's generic BAD_REQUEST, so a client can
 * tell "turn batching off" from a malformed request. Refused because every per-operation guard (cost,
 * rate limit, deadline, the operation log) would then share one HTTP request and one body limit, and
 * HTTP/1.1 keep-alive and HTTP/2 already make many small requests cheap.
 */

import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../errors.ts';

/** Code of the refusal. */
const BATCHING_NOT_SUPPORTED = 'BATCHING_NOT_SUPPORTED' satisfies ErrorCode;

/** Wraps Yoga's request parser: an array body is refused before Yoga's own batching check sees it. */
export function useBatchingRefused(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        const parsed = await requestParser(request);
        if (Array.isArray(parsed)) {
          throw new GraphQLError(
            'Batching (an array of operations in one request) is not supported: send one operation per request.',
            { extensions: { code: BATCHING_NOT_SUPPORTED, http: { status: 400 } } },
          );
        }
        return parsed;
      });
    },
  };
}
