/**
 * The three error channels end to end: upstream validation detail and msg_id refusals as union
 * members, request-level BAD_USER_INPUT / UNAUTHENTICATED, and upstream failures (down, timeout, 429,
 * 5xx) as coded errors that never carry an upstream body. Plus tenant isolation and secret-free logs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ConversationRecord, CreateConversationResponseRecord } from '../../src/contract/records.ts';
import type { LocalServiceOptions } from '../../src/local-service/index.ts';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { conversationRecord } from '../helpers/fixtures.ts';
import { gatewayForTest, type TestGatewayOptions } from '../helpers/gateway.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';
import {
  CreateConversationDocument,
  GetConversationDocument,
  ListConversationsDocument,
} from './documents.ts';

const ALICE = 'alice-secret-key-1';
const BOB = 'bob-secret-key-2';

/** The local service with Alice's and Bob's keys, closed when the test finishes. */
const service = (options: Partial<LocalServiceOptions> = {}) =>
  localServiceForTest({ sessionApiKeys: [ALICE, BOB], ...options });
const gatewayFor = (upstreamUrl: string, options: Partial<TestGatewayOptions> = {}) =>
  gatewayForTest({ upstreamUrl, ...options });

const record = (overrides: Partial<ConversationRecord>) =>
  conversationRecord('abcdefabcdefabcdefabcdefabcdef12', {
    git_provider: 'github',
    pr_number: [7],
    ...overrides,
  });

describe('channel 1: outcomes a client branches on', () => {
  it('returns the upstream validation detail (without echoed input) as UpstreamValidationError', async () => {
    const upstream = await service();
    const gateway = await gatewayFor(upstream.url);
    const { body } = await gateway.execute(
      CreateConversationDocument,
      {
        input: {
          // repo, issue_number and title are required upstream; the gateway leaves the check to it.
          suggestedTask: { gitProvider: 'GITHUB', taskType: 'OPEN_PR', title: 'secret-looking-title' },
        },
      },
      { key: ALICE },
    );
    expect(body.errors).toBeUndefined();
    const result = body.data?.createConversation;
    expect(result?.__typename).toBe('UpstreamValidationError');
    if (result?.__typename !== 'UpstreamValidationError') throw new Error('unreachable');
    expect(result.issues).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'suggested_task', 'repo'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'suggested_task', 'issue_number'], msg: 'Field required', type: 'missing' },
      ]),
    );
    expect(result.message).toContain('body.suggested_task');
    expect(JSON.stringify(body)).not.toContain('secret-looking-title');
    // Nothing was created.
    const list = await rest<{ results: unknown[] }>(upstream.url, '/api/conversations', { key: ALICE });
    expect(list.body.results).toEqual([]);
  });

  it('returns msg_id refusals as UpstreamDomainError', async () => {
    const upstream = await service();
    const gateway = await gatewayFor(upstream.url);
    const { body } = await gateway.execute(
      CreateConversationDocument,
      { input: { repository: 'acme/locked', gitProvider: 'GITLAB' } },
      { key: ALICE },
    );
    expect(body).toEqual({
      data: {
        createConversation: {
          __typename: 'UpstreamDomainError',
          message: 'Unable to access repo acme/locked',
          msgId: 'STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR',
        },
      },
    });
  });
});

describe('channel 2: request-level problems', () => {
  it('refuses backward paging, out-of-range first, garbage cursors and UNKNOWN inputs without calling upstream', async () => {
    const upstream = await service();
    const gateway = await gatewayFor(upstream.url);
    const cases = [
      { last: 5 },
      { before: 'x' },
      { first: 0 },
      { first: 101 },
      { after: 'garbage' },
      { after: Buffer.from('[1,null,20,99,"x"]').toString('base64url') },
      { trigger: 'UNKNOWN' as const },
    ];
    for (const variables of cases) {
      const { body } = await gateway.execute(ListConversationsDocument, variables, { key: ALICE });
      expect(body.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe('BAD_USER_INPUT');
    }
    const create = await gateway.execute(
      CreateConversationDocument,
      { input: { gitProvider: 'UNKNOWN' } },
      { key: ALICE },
    );
    expect(create.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(gateway.calls).toEqual([]);
  });

  it('maps a refused or missing key to UNAUTHENTICATED and uses the default key only when none is sent', async () => {
    const upstream = await service();
    const plain = await gatewayFor(upstream.url);
    for (const credentials of [{}, { key: 'wrong-key' }, { bearer: 'wrong-token' }]) {
      const { body } = await plain.execute(ListConversationsDocument, { first: 1 }, credentials);
      expect(body.data).toEqual({ conversations: null });
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(JSON.stringify(body)).not.toContain('Unauthorized');
    }

    const withDefault = await gatewayFor(upstream.url, { defaultSessionApiKey: ALICE });
    const anonymous = await withDefault.execute(ListConversationsDocument, { first: 1 }, {});
    expect(anonymous.body.errors).toBeUndefined();
    const wrong = await withDefault.execute(ListConversationsDocument, { first: 1 }, { key: 'wrong-key' });
    expect(wrong.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    // The forwarded header is the caller's, exactly as sent.
    const bearer = await withDefault.execute(ListConversationsDocument, { first: 1 }, { bearer: BOB });
    expect(bearer.body.errors).toBeUndefined();
    for (const line of [...plain.logs(), ...withDefault.logs()]) {
      expect(line).not.toContain(ALICE);
      expect(line).not.toContain(BOB);
      expect(line).not.toContain('wrong-key');
      expect(line).not.toContain('wrong-token');
    }
  });
});

describe('channel 3: upstream failures become coded errors', () => {
  it('upstream down: UPSTREAM_UNAVAILABLE; reads are retried, creates are not; /ready says 503', async () => {
    const upstream = await service();
    const url = upstream.url;
    await upstream.close();
    const gateway = await gatewayFor(url, { upstream: { retries: 2, retryBaseDelayMs: 10 } });
    const list = await gateway.execute(ListConversationsDocument, { first: 1 }, { key: ALICE });
    expect(list.body).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'UPSTREAM_UNAVAILABLE' } }],
    });
    expect(gateway.countCalls('GET', '/api/conversations')).toBe(3);
    const create = await gateway.execute(CreateConversationDocument, { input: {} }, { key: ALICE });
    expect(create.body).toMatchObject({
      data: null,
      errors: [{ extensions: { code: 'UPSTREAM_UNAVAILABLE' } }],
    });
    expect(gateway.countCalls('POST', '/api/conversations')).toBe(1);
    expect(JSON.stringify([list.body, create.body])).not.toContain(url);

    const ready = await fetch(new URL('/ready', gateway.url));
    expect(ready.status).toBe(503);
    await ready.body?.cancel();
    const health = await fetch(new URL('/health', gateway.url));
    expect(health.status).toBe(200);
    await health.body?.cancel();
  });

  it('timeout: UPSTREAM_TIMEOUT when the upstream never answers', async () => {
    const hanging = await misbehavingUpstreamForTest(() => {});
    const gateway = await gatewayFor(hanging.url, { upstreamTimeoutMs: 200 });
    const { body } = await gateway.execute(GetConversationDocument, { id: 'a'.repeat(32) }, { key: ALICE });
    expect(body).toMatchObject({
      data: { conversation: null },
      errors: [{ path: ['conversation'], extensions: { code: 'UPSTREAM_TIMEOUT' } }],
    });
  });

  it('cancelling the GraphQL request aborts the upstream call', async () => {
    const hanging = await misbehavingUpstreamForTest(() => {});
    const gateway = await gatewayFor(hanging.url, { upstreamTimeoutMs: 20_000 });
    const controller = new AbortController();
    const pending = gateway
      .execute(ListConversationsDocument, { first: 1 }, { key: ALICE, signal: controller.signal })
      .catch((error: Error) => error);
    while (hanging.requests.length === 0) await sleep(10);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    for (let i = 0; i < 200 && hanging.abortedRequests === 0; i++) await sleep(10);
    expect(hanging.abortedRequests).toBe(1);
  });

  it('429 with Retry-After: RATE_LIMITED with the delay; a short Retry-After is waited for and retried once', async () => {
    let answered = 0;
    const limited = await misbehavingUpstreamForTest((req, res) => {
      answered++;
      if (req.url?.startsWith('/api/conversations/') && answered % 2 === 0) {
        sendJson(res, 200, record({}));
        return;
      }
      sendJson(res, 429, { message: 'Too many requests' }, { 'retry-after': '1' });
    });
    const impatient = await gatewayFor(limited.url, { upstream: { maxRetryAfterMs: 0 } });
    const { body } = await impatient.execute(ListConversationsDocument, { first: 1 }, { key: ALICE });
    expect(body).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 1 } }],
    });
    expect(impatient.calls).toHaveLength(1);
    expect(JSON.stringify(body)).not.toContain('Too many requests');

    // With room to wait, the read waits the second and succeeds on the retry.
    answered = 0;
    const patient = await gatewayFor(limited.url, { upstream: { maxRetryAfterMs: 2_000 } });
    const started = performance.now();
    const read = await patient.execute(
      GetConversationDocument,
      { id: 'abcdefabcdefabcdefabcdefabcdef12' },
      { key: ALICE },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data?.conversation?.conversationId).toBe('abcdefabcdefabcdefabcdefabcdef12');
    expect(patient.calls.map((call) => call.attempt)).toEqual([1, 2]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('the local service rate limit produces real 429s that arrive as RATE_LIMITED', async () => {
    const upstream = await service({ rateLimit: true });
    const gateway = await gatewayFor(upstream.url, { upstream: { maxRetryAfterMs: 0 } });
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        gateway.execute(ListConversationsDocument, { first: 1 }, { key: ALICE }),
      ),
    );
    const codes = results.map((result) => result.body.errors?.[0]?.extensions?.code ?? 'ok');
    expect(codes).toContain('RATE_LIMITED');
    expect(codes).toContain('ok');
    expect(new Set(codes)).toEqual(new Set(['ok', 'RATE_LIMITED']));
  });

  it('5xx and unreadable answers: UPSTREAM_ERROR without the upstream body', async () => {
    const broken = await misbehavingUpstreamForTest((req, res) => {
      if (req.url?.startsWith('/api/conversations/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"half": ');
        return;
      }
      sendJson(res, 500, { error: 'db password=hunter2 leaked' });
    });
    const gateway = await gatewayFor(broken.url);
    const list = await gateway.execute(ListConversationsDocument, { first: 1 }, { key: ALICE });
    expect(list.body).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'UPSTREAM_ERROR', status: 500 } }],
    });
    const one = await gateway.execute(GetConversationDocument, { id: 'a'.repeat(32) }, { key: ALICE });
    expect(one.body).toMatchObject({
      data: { conversation: null },
      errors: [{ extensions: { code: 'UPSTREAM_ERROR' } }],
    });
    const text = JSON.stringify([list.body, one.body]) + gateway.logs().join('\n');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('"half"');
  });
});

describe('values a newer upstream may send', () => {
  it('maps unknown enum values to UNKNOWN and keeps the raw strings', async () => {
    const newer = await misbehavingUpstreamForTest((_req, res) =>
      sendJson(
        res,
        200,
        record({
          status: 'HIBERNATING',
          runtime_status: 'STATUS$WARP_DRIVE',
          trigger: 'telegram',
          git_provider: 'gitea',
        }),
      ),
    );
    const gateway = await gatewayFor(newer.url);
    const { body } = await gateway.execute(
      GetConversationDocument,
      { id: 'abcdefabcdefabcdefabcdefabcdef12' },
      { key: ALICE },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.conversation).toMatchObject({
      status: 'UNKNOWN',
      statusRaw: 'HIBERNATING',
      runtimeStatus: 'UNKNOWN',
      runtimeStatusRaw: 'STATUS$WARP_DRIVE',
      trigger: 'UNKNOWN',
      triggerRaw: 'telegram',
      gitProvider: 'UNKNOWN',
      gitProviderRaw: 'gitea',
      prNumbers: [7],
      lastUpdatedAt: '2025-04-29T15:13:51.370706Z',
    });
  });
});

describe('callers never see each other', () => {
  it("one key's conversations are invisible to another, in lists and by id, within one gateway", async () => {
    const upstream = await service({ nestedRuntime: true });
    const gateway = await gatewayFor(upstream.url);
    const created = await gateway.execute(CreateConversationDocument, { input: {} }, { key: ALICE });
    const payload = created.body.data?.createConversation;
    if (payload?.__typename !== 'CreateConversationPayload') throw new Error(JSON.stringify(created.body));
    const aliceId = payload.conversationId;
    const bobCreated = await rest<CreateConversationResponseRecord>(upstream.url, '/api/conversations', {
      method: 'POST',
      key: BOB,
      body: {},
    });

    // Same query text, same gateway, different keys, issued concurrently.
    const [aliceList, bobList] = await Promise.all([
      gateway.execute(ListConversationsDocument, { first: 10 }, { key: ALICE }),
      gateway.execute(ListConversationsDocument, { first: 10 }, { key: BOB }),
    ]);
    expect(aliceList.body.data?.conversations?.edges.map((edge) => edge.node.conversationId)).toEqual([
      aliceId,
    ]);
    expect(bobList.body.data?.conversations?.edges.map((edge) => edge.node.conversationId)).toEqual([
      bobCreated.body.conversation_id,
    ]);

    const [bobReadsAlice, aliceReadsAlice] = await Promise.all([
      gateway.execute(GetConversationDocument, { id: encodeGlobalId('Conversation', aliceId) }, { key: BOB }),
      gateway.execute(GetConversationDocument, { id: aliceId }, { key: ALICE }),
    ]);
    expect(bobReadsAlice.body).toEqual({ data: { conversation: null } });
    expect(aliceReadsAlice.body.data?.conversation?.conversationId).toBe(aliceId);

    // The nested runtime's key is only in its owner's answer, never in a log line.
    for (let i = 0; i < 50; i++) {
      const read = await gateway.execute(GetConversationDocument, { id: aliceId }, { key: ALICE });
      const runtimeKey = read.body.data?.conversation?.sessionApiKey;
      if (runtimeKey) {
        expect(gateway.logs().join('\n')).not.toContain(runtimeKey);
        const bobView = await gateway.execute(ListConversationsDocument, { first: 10 }, { key: BOB });
        expect(JSON.stringify(bobView.body)).not.toContain(runtimeKey);
        break;
      }
      if (i === 49) throw new Error('the conversation never reached RUNNING with a runtime key');
      await sleep(20);
    }
    const logs = gateway.logs().join('\n');
    expect(logs).not.toContain(ALICE);
    expect(logs).not.toContain(BOB);
    // One line per operation with name, duration and outcome.
    const operations = gateway
      .logs()
      .map(
        (line) =>
          JSON.parse(line) as { msg: string; operation?: string; outcome?: string; durationMs?: number },
      )
      .filter((line) => line.msg === 'operation');
    expect(operations.length).toBeGreaterThanOrEqual(5);
    expect(operations[0]).toMatchObject({ operation: 'CreateConversation', outcome: 'ok' });
    expect(typeof operations[0]?.durationMs).toBe('number');
  });
});
