/**
 * `Conversation.events` and the lifecycle mutations against an upstream that misbehaves in ways the
 * local service never does: pages that never end, events without ids or of unknown kinds, 500s with a
 * secret in the body, answers of the wrong shape. A scripted double over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { gatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import {
  type MisbehavingUpstream,
  misbehavingUpstreamForTest,
  sendJson,
} from '../helpers/misbehaving-upstream.ts';

const ID = 'a'.repeat(32);
const SECRET = 'sk-super-secret-value';

const record = {
  conversation_id: ID,
  title: 'T',
  last_updated_at: null,
  status: 'RUNNING',
  runtime_status: null,
  selected_repository: null,
  selected_branch: null,
  git_provider: null,
  trigger: 'gui',
  num_connections: 0,
  url: null,
  session_api_key: null,
  created_at: '2026-01-01T00:00:00Z',
  pr_number: [],
};

/** A V0 double that serves the record and answers the events route with `events(url)`. */
async function double(
  events: (url: URL) => { status: number; body: unknown },
  other: (method: string) => { status: number; body: unknown } = () => ({ status: 404, body: {} }),
): Promise<{ upstream: MisbehavingUpstream; gateway: TestGateway }> {
  const upstream = await misbehavingUpstreamForTest((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === `/api/conversations/${ID}`)
      return sendJson(res, 200, record);
    if (req.method === 'GET' && url.pathname === `/api/conversations/${ID}/events`) {
      const answer = events(url);
      return sendJson(res, answer.status, answer.body);
    }
    const answer = other(req.method ?? '');
    return sendJson(res, answer.status, answer.body);
  });
  const gateway = await gatewayForTest({ upstreamUrl: upstream.url, upstreamApi: 'v0' });
  return { upstream, gateway };
}

async function query(
  gateway: TestGateway,
  text: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: text, variables }),
  });
  return {
    text: await response.clone().text(),
    body: (await response.json()) as {
      data?: Record<string, unknown> | null;
      errors?: Array<{ message: string; extensions?: { code?: string } }>;
    },
  };
}

const EVENTS = `query($first: Int) { conversation(id: "${ID}") { title events(first: $first) {
  edges { cursor node { __typename eventId upstreamKind } } pageInfo { hasNextPage endCursor } } } }`;

describe('Conversation.events against a hostile upstream', () => {
  it('stops after 5 reads when pages of id-less events never end, and answers what it has', async () => {
    const { upstream, gateway } = await double(() => ({
      status: 200,
      body: {
        events: [{ status_update: true, type: 'info', message: 'x' }, 'not an object'],
        has_more: true,
      },
    }));
    const { body } = await query(gateway, EVENTS, { first: 10 });
    expect(body.errors).toBeUndefined();
    expect(body.data?.conversation).toEqual({
      title: 'T',
      events: { edges: [], pageInfo: { hasNextPage: true, endCursor: null } },
    });
    // A page without ids cannot move the walk on: one read, not a loop.
    expect(upstream.requests.filter((r) => r.path.includes('/events')).length).toBe(1);
  });

  it('bounds the reads per field when every page is short, and maps unknown kinds to OtherEvent', async () => {
    const { upstream, gateway } = await double((url) => {
      const start = Number(url.searchParams.get('start_id'));
      // One event per page however many are asked for, and always "more".
      return {
        status: 200,
        body: {
          events: [{ id: start, source: 'agent', message: '', action: 'teleport', args: {} }],
          has_more: true,
        },
      };
    });
    const { body } = await query(gateway, EVENTS, { first: 10 });
    const events = (
      body.data?.conversation as { events?: { edges: unknown[]; pageInfo: unknown } } | undefined
    )?.events;
    expect(events?.edges).toEqual(
      [0, 1, 2, 3, 4].map((id) => ({
        cursor: Buffer.from(JSON.stringify([1, 'v0', id])).toString('base64url'),
        node: { __typename: 'OtherEvent', eventId: id, upstreamKind: 'teleport' },
      })),
    );
    expect(events?.pageInfo).toEqual({
      hasNextPage: true,
      endCursor: Buffer.from(JSON.stringify([1, 'v0', 4])).toString('base64url'),
    });
    expect(upstream.requests.filter((r) => r.path.includes('/events')).length).toBe(5);
  });

  it('an older server without the events route (generic 404, or 405) is UPSTREAM_ERROR, not a missing conversation', async () => {
    for (const answer of [
      { status: 404, body: { detail: 'Not Found' } },
      { status: 405, body: { detail: 'Method Not Allowed' } },
    ]) {
      const { gateway } = await double(() => answer);
      const { body } = await query(gateway, EVENTS, { first: 10 });
      expect(body.data?.conversation).toEqual({ title: 'T', events: null });
      expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_ERROR']);
    }
  });

  it('a 500 with a secret in its body nulls only the field, with UPSTREAM_ERROR and no body echoed', async () => {
    const { gateway } = await double(() => ({
      status: 500,
      body: { status: 'error', message: `Failed: token ${SECRET}` },
    }));
    const { body, text } = await query(gateway, EVENTS, { first: 3 });
    expect(body.data?.conversation).toEqual({ title: 'T', events: null });
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(text).not.toContain(SECRET);
    expect(gateway.logs().join('\n')).not.toContain(SECRET);
  });

  it('an answer of the wrong shape is UPSTREAM_ERROR', async () => {
    const { gateway } = await double(() => ({ status: 200, body: { items: [] } }));
    const { body } = await query(gateway, EVENTS, { first: 3 });
    expect(body.data?.conversation).toEqual({ title: 'T', events: null });
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  });
});

describe('lifecycle mutations against a hostile upstream', () => {
  it('odd answers and 5xx become coded errors, never a crash or an upstream body', async () => {
    const { gateway } = await double(
      () => ({ status: 200, body: { events: [], has_more: false } }),
      (method) =>
        method === 'DELETE'
          ? { status: 200, body: 'yes' }
          : method === 'PATCH'
            ? { status: 500, body: { message: SECRET } }
            : { status: 503, body: {} },
    );
    const deleted = await query(
      gateway,
      `mutation { deleteConversation(input: { conversationId: "${ID}" }) { __typename } }`,
    );
    expect(deleted.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    const renamed = await query(
      gateway,
      `mutation { renameConversation(input: { conversationId: "${ID}", title: "x" }) { __typename } }`,
    );
    expect(renamed.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(renamed.text).not.toContain(SECRET);
    const stopped = await query(
      gateway,
      `mutation { stopConversation(input: { conversationId: "${ID}" }) { __typename } }`,
    );
    expect(stopped.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
  });

  it("a 4xx's reason is scrubbed of the caller's key and of token shapes, as on every other write", async () => {
    const KEY = 'caller-session-key-0001';
    const RENAME = `mutation { renameConversation(input: { conversationId: "${ID}", title: "x" }) {
      __typename ... on UpstreamValidationError { message issues { loc msg type } }
      ... on PermissionDeniedError { msgId } } }`;
    const answers: Array<{ status: number; body: unknown }> = [
      // FastAPI's 422: a custom validator's message may quote what it was given.
      {
        status: 422,
        body: {
          detail: [
            {
              type: 'value_error',
              loc: ['body', 'title'],
              msg: `Value error, title must not hold a key: ${KEY} or ghp_echoedToken1234`,
              input: `x ${KEY}`,
            },
          ],
        },
      },
      // A 422 without the list but with a readable reason: UPSTREAM_REFUSED, as the other writes.
      { status: 422, body: { detail: `Title refused for ${KEY}` } },
      // Rename's 403 names its reason id, which passes through the same scrubbing.
      { status: 403, body: { status: 'error', msg_id: 'AUTHORIZATION$PERMISSION_DENIED' } },
    ];
    const { gateway } = await double(
      () => ({ status: 200, body: { events: [], has_more: false } }),
      () => answers.shift() ?? { status: 500, body: {} },
    );
    const headers = { 'x-session-api-key': KEY };
    const invalid = await query(gateway, RENAME, {}, headers);
    expect(invalid.body).toEqual({
      data: {
        renameConversation: {
          __typename: 'UpstreamValidationError',
          message:
            'The conversation service rejected the input at body.title: Value error, title must not hold a key: [redacted] or [redacted]',
          issues: [
            {
              loc: ['body', 'title'],
              msg: 'Value error, title must not hold a key: [redacted] or [redacted]',
              type: 'value_error',
            },
          ],
        },
      },
    });
    const refused = await query(gateway, RENAME, {}, headers);
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors?.map((error) => [error.extensions?.code, error.message])).toEqual([
      ['UPSTREAM_REFUSED', 'Title refused for [redacted]'],
    ]);
    const denied = await query(gateway, RENAME, {}, headers);
    expect(denied.body.data?.renameConversation).toEqual({
      __typename: 'PermissionDeniedError',
      msgId: 'AUTHORIZATION$PERMISSION_DENIED',
    });
    for (const text of [invalid.text, refused.text, gateway.logs().join('\n')]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('ghp_echoedToken1234');
    }
  });
});
