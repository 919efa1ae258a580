/**
 * The one mapping of an upstream 4xx to the port's domain errors (src/upstream/rejection-errors.ts),
 * which every route of both adapters sends through: a route's own claim first, FastAPI's 422 list as
 * UpstreamValidationError, a readable reason as UpstreamDomainError, anything else UPSTREAM_ERROR, and
 * every message scrubbed of the call's secrets. The routes themselves are exercised over real sockets
 * in errors.test.ts, history-hostile.test.ts and v1-hostile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError, UpstreamRejection } from '../../src/upstream/failures.ts';
import {
  ConversationNotFoundError,
  UpstreamDomainError,
  UpstreamValidationError,
} from '../../src/upstream/port/errors.ts';
import { CLIENT_REJECTION_STATUSES, withRejections } from '../../src/upstream/rejection-errors.ts';

const SECRET = 'caller-secret-0001';

/** What `withRejections` throws for an upstream answering `status` with `body`. */
async function mapped(
  status: number,
  body: unknown,
  claim?: (status: number, body: unknown) => Error | undefined,
): Promise<unknown> {
  return withRejections([SECRET], () => Promise.reject(new UpstreamRejection(status, body)), claim).catch(
    (error: unknown) => error,
  );
}

describe('withRejections', () => {
  it('answers what the call answers, and lets any other error through unchanged', async () => {
    expect(await withRejections([SECRET], () => Promise.resolve({ ok: true }))).toEqual({ ok: true });
    const failure = new UpstreamError('UPSTREAM_TIMEOUT');
    expect(await withRejections([SECRET], () => Promise.reject(failure)).catch((e: unknown) => e)).toBe(
      failure,
    );
  });

  it("asks the route's claim first, with the status and the body", async () => {
    const seen: unknown[] = [];
    const notFound = new ConversationNotFoundError('c1');
    const claim = (status: number, body: unknown) => {
      seen.push([status, body]);
      return status === 404 ? notFound : undefined;
    };
    expect(await mapped(404, { detail: 'Conversation c1 not found' }, claim)).toBe(notFound);
    // Unclaimed: the shared rules apply.
    expect(await mapped(409, { detail: 'Busy' }, claim)).toBeInstanceOf(UpstreamDomainError);
    expect(seen).toEqual([
      [404, { detail: 'Conversation c1 not found' }],
      [409, { detail: 'Busy' }],
    ]);
  });

  it("turns FastAPI's 422 list into UpstreamValidationError: messages scrubbed, echoed input dropped", async () => {
    const error = await mapped(422, {
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'mcp_config', 'sse_servers', 0, 'api_key'],
          msg: `Value error, ${SECRET} is not a valid key (Bearer abc.def, ghp_1234567890)`,
          input: SECRET,
        },
        { loc: 'not a list', msg: 42 },
        null,
      ],
    });
    expect(error).toBeInstanceOf(UpstreamValidationError);
    const validation = error as UpstreamValidationError;
    expect(validation.issues).toEqual([
      {
        loc: ['body', 'mcp_config', 'sse_servers', '0', 'api_key'],
        msg: 'Value error, [redacted] is not a valid key (Bearer [redacted] [redacted])',
        type: 'value_error',
      },
      { loc: [], msg: 'invalid', type: 'unknown' },
      { loc: [], msg: 'invalid', type: 'unknown' },
    ]);
    expect(validation.message).toBe(
      'The conversation service rejected the input at body.mcp_config.sse_servers.0.api_key: Value error, [redacted] is not a valid key (Bearer [redacted] [redacted])',
    );
    expect(validation.extensions.code).toBe('UPSTREAM_VALIDATION');
  });

  it('turns a readable reason of any 4xx into UpstreamDomainError, scrubbed, with its msg_id', async () => {
    const cases: Array<[number, unknown, { message: string; msgId: string | null }]> = [
      [
        400,
        { status: 'error', message: `No settings for ${SECRET}`, msg_id: 'CONFIGURATION$SETTINGS_NOT_FOUND' },
        { message: 'No settings for [redacted]', msgId: 'CONFIGURATION$SETTINGS_NOT_FOUND' },
      ],
      [400, { msg_id: 'STATUS$ONLY_AN_ID' }, { message: 'STATUS$ONLY_AN_ID', msgId: 'STATUS$ONLY_AN_ID' }],
      [
        409,
        { detail: `Sandbox of ${SECRET} is busy` },
        { message: 'Sandbox of [redacted] is busy', msgId: null },
      ],
      // A 422 whose detail is a sentence, not FastAPI's list.
      [422, { detail: 'Title refused' }, { message: 'Title refused', msgId: null }],
    ];
    for (const [status, body, expected] of cases) {
      const error = await mapped(status, body);
      expect(error, String(status)).toBeInstanceOf(UpstreamDomainError);
      const domain = error as UpstreamDomainError;
      expect({ message: domain.message, msgId: domain.msgId }, String(status)).toEqual(expected);
      expect(domain.extensions, String(status)).toEqual({
        code: 'UPSTREAM_REFUSED',
        ...(expected.msgId === null ? {} : { msgId: expected.msgId }),
      });
    }
  });

  it('answers UPSTREAM_ERROR with the status, never the body, for a 4xx without a readable reason', async () => {
    for (const [status, body] of [
      [422, { detail: { nested: SECRET } }],
      [418, null],
      [400, `plain text ${SECRET}`],
      [404, { message: '   ' }],
    ] as const) {
      const error = await mapped(status, body);
      expect(error, String(status)).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).extensions, String(status)).toEqual({ code: 'UPSTREAM_ERROR', status });
      expect((error as UpstreamError).message).toBe(`The conversation service failed (HTTP ${status}).`);
    }
  });
});

describe('CLIENT_REJECTION_STATUSES', () => {
  it('are the 4xx a write reads itself: not the ones with codes of their own nor the transport ones', () => {
    expect(CLIENT_REJECTION_STATUSES).toEqual(expect.arrayContaining([400, 404, 409, 410, 413, 422, 499]));
    for (const status of [401, 403, 407, 408, 429, 399, 500]) {
      expect(CLIENT_REJECTION_STATUSES, String(status)).not.toContain(status);
    }
    expect(CLIENT_REJECTION_STATUSES).toHaveLength(95);
  });
});
