/**
 * The gateway against a hostile upstream (test/helpers/hostile-upstream.ts, real HTTP on port 0):
 * odd but legal records never cost a page, timestamps always come back UTC with `Z`, a trickling body
 * ends with UPSTREAM_TIMEOUT within the configured timeout, and a readable 4xx reaches the client as
 * the mutation's error member with the message (secrets scrubbed).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { gatewayForTest, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import {
  type HostileUpstream,
  hostileId,
  hostileRecord,
  searchPage,
  startHostileUpstream,
} from '../helpers/hostile-upstream.ts';
import { codes, post, type RawAnswer } from '../helpers/http.ts';

const KEY = 'sk-hostile-caller-key-0123456789';

// Every Conversation field of a list page is over the default cost limit (the limit has its own tests);
// one caller in a hurry is not what the rate limit is about either.
const HARDENING = { rateLimit: false, queryLimits: { maxCost: 50_000 } } as const;

async function setUp(options: Partial<TestGatewayOptions> = {}) {
  const upstream = await startHostileUpstream();
  onTestFinished(() => upstream.close());
  const gateway = await gatewayForTest({
    upstreamUrl: upstream.url,
    ...options,
    hardening: { ...HARDENING, ...options.hardening },
  });
  return { upstream, gateway };
}

const FIELDS = `id conversationId title status statusRaw runtimeStatus runtimeStatusRaw selectedRepository
  selectedBranch gitProvider gitProviderRaw trigger triggerRaw numConnections url sessionApiKey createdAt
  lastUpdatedAt prNumbers`;
const LIST = `query List { conversations(first: 100) { edges { node { ${FIELDS} } } pageInfo { hasNextPage } } }`;
const ONE = `query One($id: ID!) { conversation(id: $id) { ${FIELDS} } }`;

function query(gateway: TestGateway, text: string, variables: Record<string, unknown> = {}) {
  return post(gateway.url, { query: text, variables }, { 'x-session-api-key': KEY });
}

type Node = Record<string, unknown>;
function listed(answer: RawAnswer): Node[] {
  const connection = answer.json?.data?.conversations as { edges: Array<{ node: Node }> } | null;
  return connection?.edges.map((edge) => edge.node) ?? [];
}

/** Serves `records` as the one search page and each by id. */
function serve(upstream: HostileUpstream, records: unknown[]) {
  upstream.on('GET', '/api/conversations', { json: searchPage(records) });
  upstream.on('GET', /^\/api\/conversations\/[^/]+$/, (request) => ({
    json:
      records.find(
        (record) =>
          typeof record === 'object' &&
          record !== null &&
          request.path.endsWith(`/${String((record as { conversation_id?: unknown }).conversation_id)}`),
      ) ?? null,
  }));
}

describe('a record the upstream sends oddly never costs the page', () => {
  it('title null or missing: the upstream default title, in the list and by id', async () => {
    const { upstream, gateway } = await setUp();
    const nullTitle = hostileRecord({ title: null });
    const missingTitle = hostileRecord({ title: undefined });
    const fine = hostileRecord({ title: 'Fix the build' });
    serve(upstream, [fine, nullTitle, missingTitle]);

    const list = await query(gateway, LIST);
    expect(list.status).toBe(200);
    expect(list.json?.errors).toBeUndefined();
    expect(listed(list).map((node) => [node.conversationId, node.title])).toEqual([
      [fine.conversation_id, 'Fix the build'],
      [nullTitle.conversation_id, `Conversation ${String(nullTitle.conversation_id).slice(0, 5)}`],
      [missingTitle.conversation_id, `Conversation ${String(missingTitle.conversation_id).slice(0, 5)}`],
    ]);

    for (const record of [nullTitle, missingTitle]) {
      const one = await query(gateway, ONE, { id: record.conversation_id });
      expect(one.status).toBe(200);
      expect(one.json).toEqual({
        data: {
          conversation: expect.objectContaining({
            conversationId: record.conversation_id,
            title: `Conversation ${String(record.conversation_id).slice(0, 5)}`,
          }),
        },
      });
    }
  });

  it('every optional field null: documented fallbacks, no error', async () => {
    const { upstream, gateway } = await setUp();
    const id = hostileId();
    const allNull = Object.fromEntries(
      Object.keys(hostileRecord()).map((key) => [key, key === 'conversation_id' ? id : null]),
    );
    serve(upstream, [allNull]);
    const list = await query(gateway, LIST);
    expect(list.status).toBe(200);
    expect(list.json?.errors).toBeUndefined();
    expect(listed(list)).toEqual([
      {
        id: expect.any(String),
        conversationId: id,
        title: `Conversation ${id.slice(0, 5)}`,
        status: 'UNKNOWN',
        statusRaw: null,
        runtimeStatus: null,
        runtimeStatusRaw: null,
        selectedRepository: null,
        selectedBranch: null,
        gitProvider: null,
        gitProviderRaw: null,
        trigger: null,
        triggerRaw: null,
        numConnections: 0,
        url: null,
        sessionApiKey: null,
        createdAt: null,
        lastUpdatedAt: null,
        prNumbers: [],
      },
    ]);
  });

  it('wrong types and unknown values: fallbacks and raw strings, the other records intact', async () => {
    const { upstream, gateway } = await setUp();
    const odd = hostileRecord({
      title: 42,
      status: 'HIBERNATING',
      runtime_status: { nested: true },
      trigger: 'telegram',
      git_provider: 7,
      num_connections: 'many',
      pr_number: [1, 'two', 3.5, 4],
      created_at: 'yesterday',
      last_updated_at: 1_723_000_000,
      url: ['not', 'a', 'url'],
    });
    const fine = hostileRecord();
    serve(upstream, [odd, fine]);
    const list = await query(gateway, LIST);
    expect(list.status).toBe(200);
    expect(list.json?.errors).toBeUndefined();
    const [first, second] = listed(list);
    expect(first).toMatchObject({
      conversationId: odd.conversation_id,
      title: `Conversation ${String(odd.conversation_id).slice(0, 5)}`,
      status: 'UNKNOWN',
      statusRaw: 'HIBERNATING',
      runtimeStatus: null,
      runtimeStatusRaw: null,
      trigger: 'UNKNOWN',
      triggerRaw: 'telegram',
      gitProvider: null,
      numConnections: 0,
      prNumbers: [1, 4],
      createdAt: null,
      lastUpdatedAt: null,
      url: null,
    });
    expect(second).toMatchObject({ conversationId: fine.conversation_id, status: 'RUNNING', prNumbers: [7] });
  });

  it('a record without a usable conversation_id is dropped with a warning; its neighbours stay', async () => {
    const { upstream, gateway } = await setUp();
    const before = hostileRecord();
    const after = hostileRecord();
    serve(upstream, [
      before,
      hostileRecord({ conversation_id: null, session_api_key: 'sk-dropped-record-secret' }),
      42,
      hostileRecord({ conversation_id: 'not a usable id!' }),
      after,
    ]);
    const list = await query(gateway, LIST);
    expect(list.status).toBe(200);
    expect(list.json?.errors).toBeUndefined();
    expect(listed(list).map((node) => node.conversationId)).toEqual([
      before.conversation_id,
      after.conversation_id,
    ]);
    const warnings = gateway
      .logs()
      .map((line) => JSON.parse(line) as { level: number; msg: string; upstream?: { index?: number } })
      .filter((line) => line.level === 40 && line.msg.includes('dropped'));
    expect(warnings.map((line) => line.upstream?.index)).toEqual([1, 2, 3]);
    expect(gateway.logs().join('\n')).not.toContain('sk-dropped-record-secret');
  });

  it('a page of nothing but unusable records is an empty page, not an error', async () => {
    const { upstream, gateway } = await setUp();
    serve(upstream, [null, 'x', { title: 'no id' }]);
    const list = await query(gateway, LIST);
    expect(list.json).toEqual({ data: { conversations: { edges: [], pageInfo: { hasNextPage: false } } } });
  });
});

describe('record timestamps are UTC with Z, microseconds kept', () => {
  const CASES: Array<[string, string]> = [
    ['2025-08-14T13:30:44.142725+02:00', '2025-08-14T11:30:44.142725Z'],
    ['2025-08-14T13:30:44.142725-05:30', '2025-08-14T19:00:44.142725Z'],
    ['2025-08-14T00:51:04', '2025-08-14T00:51:04.000Z'],
    ['2025-04-29T15:13:51.370706Z', '2025-04-29T15:13:51.370706Z'],
  ];

  it('converts offsets; reads zone-less values in UTC by default (list and by id)', async () => {
    const { upstream, gateway } = await setUp();
    const records = CASES.map(([sent]) => hostileRecord({ created_at: sent, last_updated_at: sent }));
    serve(upstream, records);
    const list = await query(gateway, LIST);
    expect(list.json?.errors).toBeUndefined();
    expect(listed(list).map((node) => [node.createdAt, node.lastUpdatedAt])).toEqual(
      CASES.map(([, utc]) => [utc, utc]),
    );
    const one = await query(gateway, ONE, { id: records[0]?.conversation_id });
    expect(one.json?.data?.conversation).toMatchObject({
      createdAt: '2025-08-14T11:30:44.142725Z',
      lastUpdatedAt: '2025-08-14T11:30:44.142725Z',
    });
  });

  it('reads zone-less values in UPSTREAM_TIMEZONE, like event timestamps', async () => {
    const { upstream, gateway } = await setUp({ upstreamTimeZone: 'Asia/Kolkata' });
    const record = hostileRecord({
      created_at: '2025-08-14T00:51:04.5',
      last_updated_at: '2025-08-14T13:30:44.142725+02:00',
    });
    serve(upstream, [record]);
    const one = await query(gateway, ONE, { id: record.conversation_id });
    expect(one.json).toEqual({
      data: {
        conversation: expect.objectContaining({
          createdAt: '2025-08-13T19:21:04.500Z',
          lastUpdatedAt: '2025-08-14T11:30:44.142725Z',
        }),
      },
    });
  });
});

describe('each upstream attempt has one deadline: connect, headers and the whole body', () => {
  it('a body trickling one byte at a time ends with UPSTREAM_TIMEOUT (lookup and list)', async () => {
    const { upstream, gateway } = await setUp({ upstreamTimeoutMs: 300 });
    const record = hostileRecord();
    // Headers at once, then one byte every 100 ms: each gap is far below the timeout, the whole body
    // (about 450 bytes) far above it.
    upstream.on('GET', /^\/api\/conversations/, {
      json: searchPage([record]),
      trickle: { intervalMs: 100 },
    });
    const one = await query(gateway, ONE, { id: record.conversation_id });
    expect(one.json).toMatchObject({
      data: { conversation: null },
      errors: [{ path: ['conversation'], extensions: { code: 'UPSTREAM_TIMEOUT' } }],
    });
    const list = await query(gateway, LIST);
    expect(codes(list)).toEqual(['UPSTREAM_TIMEOUT']);
    expect(list.json?.data).toEqual({ conversations: null });
  });

  it('the operation deadline still wins when it is shorter', async () => {
    const { upstream, gateway } = await setUp({
      upstreamTimeoutMs: 20_000,
      hardening: { operationTimeoutMs: 300 },
    });
    upstream.on('GET', /^\/api\/conversations/, { json: searchPage([]), trickle: { intervalMs: 100 } });
    expect(codes(await query(gateway, LIST))).toEqual(['OPERATION_TIMEOUT']);
  });

  it('a connection cut mid-body is retried (reads only) and then answers', async () => {
    const { upstream, gateway } = await setUp();
    const record = hostileRecord();
    let calls = 0;
    upstream.on('GET', /^\/api\/conversations\/[^/]+$/, () => {
      calls++;
      return calls === 1 ? { json: record, cut: 'mid-body' } : { json: record };
    });
    const one = await query(gateway, ONE, { id: record.conversation_id });
    expect(one.json?.errors).toBeUndefined();
    expect(one.json?.data?.conversation).toMatchObject({ conversationId: record.conversation_id });
    expect(calls).toBe(2);
  });

  it('connections cut before or right after the headers: UPSTREAM_UNAVAILABLE; a write is never retried', async () => {
    const { upstream, gateway } = await setUp();
    upstream.on('GET', '/api/conversations', { cut: 'before-headers' });
    upstream.on('POST', '/api/conversations', { json: {}, cut: 'after-headers' });
    expect(codes(await query(gateway, LIST))).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(gateway.countCalls('GET', '/api/conversations')).toBe(3); // the first try and two retries
    const create = await query(gateway, 'mutation { createConversation(input: {}) { __typename } }');
    expect(codes(create)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(gateway.countCalls('POST', '/api/conversations')).toBe(1);
  });
});

describe('a readable 4xx is the mutation error member, msgId null, secrets scrubbed', () => {
  const CREATE = `mutation Create($input: CreateConversationInput!) {
    createConversation(input: $input) {
      __typename
      ... on UpstreamDomainError { message msgId }
      ... on UpstreamValidationError { message }
      ... on CreateConversationPayload { conversationId }
    }
  }`;

  it('{"status":"error","message":...} without msg_id', async () => {
    const { upstream, gateway } = await setUp();
    upstream.on('POST', '/api/conversations', {
      status: 400,
      json: { status: 'error', message: 'Repository acme/widgets is archived' },
    });
    const answer = await query(gateway, CREATE, { input: { repository: 'acme/widgets' } });
    expect(answer.json).toEqual({
      data: {
        createConversation: {
          __typename: 'UpstreamDomainError',
          message: 'Repository acme/widgets is archived',
          msgId: null,
        },
      },
    });
  });

  it('{"detail":"..."} on 400, 404 and 409', async () => {
    const { upstream, gateway } = await setUp();
    for (const status of [400, 404, 409]) {
      upstream.on('POST', '/api/conversations', { status, json: { detail: `Refused with ${status}` } });
      const answer = await query(gateway, CREATE, { input: {} });
      expect(answer.json).toEqual({
        data: {
          createConversation: {
            __typename: 'UpstreamDomainError',
            message: `Refused with ${status}`,
            msgId: null,
          },
        },
      });
    }
  });

  it('never echoes the key, an MCP apiKey, an env value or a git token the caller sent', async () => {
    const { upstream, gateway } = await setUp();
    const mcpKey = 'mcp-api-key-7f7f7f7f';
    const envValue = 'env-value-secret-5a5a';
    upstream.on('POST', '/api/conversations', {
      status: 400,
      json: {
        detail: `Bad credentials: header ${KEY}, mcp ${mcpKey}, env ${envValue}, Bearer abc.def.ghi, ghp_0123456789abcdefABCDEF`,
      },
    });
    const answer = await query(gateway, CREATE, {
      input: {
        mcpConfig: {
          sseServers: [{ url: 'https://mcp.example.com/sse', apiKey: mcpKey }],
          stdioServers: [{ name: 'fs', command: 'mcp-fs', env: [{ name: 'TOKEN', value: envValue }] }],
        },
      },
    });
    const result = answer.json?.data?.createConversation as { __typename: string; message: string };
    expect(result.__typename).toBe('UpstreamDomainError');
    expect(result.message).toContain('Bad credentials');
    for (const secret of [KEY, mcpKey, envValue, 'abc.def.ghi', 'ghp_0123456789abcdefABCDEF']) {
      expect(JSON.stringify(answer.json)).not.toContain(secret);
      expect(gateway.logs().join('\n')).not.toContain(secret);
    }

    const gitToken = 'ghp_callerGitToken0000111122223333';
    upstream.on('POST', '/api/add-git-providers', {
      status: 400,
      json: { status: 'error', message: `Token ${gitToken} was rejected by github.com` },
    });
    const added = await query(
      gateway,
      `mutation { addGitProviderToken(input: { provider: GITHUB, token: "${gitToken}" }) {
        __typename ... on UpstreamDomainError { message msgId } } }`,
    );
    const addResult = added.json?.data?.addGitProviderToken as { __typename: string; message: string };
    expect(addResult).toMatchObject({ __typename: 'UpstreamDomainError', msgId: null });
    expect(addResult.message).toContain('was rejected by github.com');
    expect(JSON.stringify(added.json)).not.toContain(gitToken);
  });

  it('a 4xx without a readable message stays UPSTREAM_ERROR with its status', async () => {
    const { upstream, gateway } = await setUp();
    upstream.on('POST', '/api/conversations', { status: 400, json: { unexpected: ['shape'] } });
    const answer = await query(gateway, CREATE, { input: {} });
    expect(answer.json).toMatchObject({
      data: null,
      errors: [{ extensions: { code: 'UPSTREAM_ERROR', status: 400 } }],
    });
  });
});
