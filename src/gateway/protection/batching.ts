/**
 * Batching (a JSON array of operations in one POST, as Apollo's BatchHttpLink sends) is refused with
 * its own code, 400 BATCHING_NOT_SUPPORTED, instead of Yoga's generic BAD_REQUEST, so a client can
 * tell "turn batching off" from a malformed request. Refused because every per-operation guard (cost,
 * rate limit, deadline, the operation log) would then share one HTTP request and one body limit, and
 * HTTP/1.1 keep-alive and HTTP/2 already make many small requests cheap.
 */

import type { Plugin } from 'graphql-yoga';
import { codedError } from '../../errors.ts';

/** Wraps Yoga's request parser: an array body is refused before Yoga's own batching check sees it. */
export function useBatchingRefused(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        const parsed = await requestParser(request);
        if (Array.isArray(parsed)) {
          throw codedError('BATCHING_NOT_SUPPORTED', {
            message:
              'Batching (an array of operations in one request) is not supported: send one operation per request.',
            refuses: true,
          });
        }
        return parsed;
      });
    },
  };
}
