/**
 * The gateway's conversation fields against the real bundled local service: create with every input
 * field and read back, provider tokens, Relay paging over 250 conversations, filters with short
 * upstream pages, and node lookups with the number of upstream calls they cost. Create, tokens, paging
 * and lookups run on both APIs; the filter suite seeds through V0's own routes.
 */

import type { ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { CreateConversationResponseRecord } from '../../src/contract/v0/records.ts';
import type { LocalServiceOptions } from '../../src/local-service/index.ts';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import type { CreateConversationInput, ListConversationsQuery } from '../generated/graphql.ts';
import { APIS, type Api, defaultTitle, searchPath, seedConversations } from '../helpers/both-apis.ts';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { rest } from '../helpers/local-service.ts';
import {
  AddGitProviderTokenDocument,
  CreateConversationDocument,
  GetConversationDocument,
  ListConversationsDocument,
  ListThenLookUpDocument,
  NodeDocument,
  NodesDocument,
  UnsetProviderTokensDocument,
} from './documents.ts';

const KEY = 'alice-key';
/** The local service (with one key) and the gateway, closed when the test finishes. */
function start(options: Partial<LocalServiceOptions> = {}, paging?: TestPaging, api: Api = 'v0') {
  return serviceAndGatewayForTest({
    api,
    service: { sessionApiKeys: [KEY], ...options },
    ...(paging ? { paging } : {}),
  });
}
type ListPage = { status: number; body: ExecutionResult<ListConversationsQuery> };
type TestPaging = { filteredPageSize: number; maxUpstreamCalls: number };

/** Creates conversations straight on the upstream (the fast way to seed); returns ids oldest first. */
async function seed(url: string, bodies: object[]): Promise<string[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const res = await rest<CreateConversationResponseRecord>(url, '/api/conversations', {
      method: 'POST',
      key: KEY,
      body,
    });
    expect(res.status).toBe(200);
    ids.push(res.body.conversation_id);
  }
  return ids;
}

async function storeGithubToken(url: string) {
  const res = await rest(url, '/api/add-git-providers', {
    method: 'POST',
    key: KEY,
    body: { provider_tokens: { github: { token: 'ghp_seed', host: null } } },
  });
  expect(res.status).toBe(200);
}

/** The graph's createConversation input with every field V0 and V1 both take (V1: docs/upstream-apis.md). */
const EVERY_SHARED_FIELD: CreateConversationInput = {
  repository: 'acme/widgets',
  gitProvider: 'GITHUB',
  selectedBranch: 'main',
  initialUserMessage: 'Fix the failing test',
  imageUrls: ['https://example.com/a.png'],
  conversationInstructions: 'Be brief.',
  suggestedTask: {
    gitProvider: 'GITHUB',
    taskType: 'FAILING_CHECKS',
    repo: 'acme/widgets',
    issueNumber: 42,
    title: 'CI is red',
  },
  createMicroagent: { repo: 'acme/widgets', gitProvider: 'GITHUB', title: 'A microagent' },
};

/** V0-only inputs: V1's start request has no field for them. */
const V0_ONLY_FIELDS: CreateConversationInput = {
  replayJson: '[]',
  mcpConfig: {
    sseServers: [{ url: 'https://mcp.example.com/sse', apiKey: 'sse-secret' }],
    shttpServers: [{ url: 'https://mcp.example.com/mcp', apiKey: 'shttp-secret' }],
    stdioServers: [
      {
        name: 'fs',
        command: 'mcp-fs',
        args: ['--root', '/'],
        env: [{ name: 'TOKEN', value: 'env-secret' }],
      },
    ],
  },
};

describe.each(APIS)('createConversation on %s', (api) => {
  type Gateway = Awaited<ReturnType<typeof start>>['gateway'];
  const create = (gateway: Gateway, input: object, credential: object = { key: KEY }) =>
    gateway.execute(CreateConversationDocument, { input }, credential);
  const statusOf = async (gateway: Gateway, id: string) =>
    (await gateway.execute(GetConversationDocument, { id }, { key: KEY })).body.data?.conversation?.status;
  /** Once the start has run its course: RUNNING, or ERROR for a start V1 refused (it refuses late). */
  const settled = (gateway: Gateway, id: string) =>
    expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).not.toBe('STARTING');
  const addToken = async (gateway: Gateway, token: string, host?: string) => {
    const added = await gateway.execute(
      AddGitProviderTokenDocument,
      { input: { provider: 'GITHUB', token, ...(host ? { host } : {}) } },
      { key: KEY },
    );
    expect(added.body.errors).toBeUndefined();
    return added.body.data?.addGitProviderToken;
  };

  it('sends every input field upstream and reads the conversation back', async () => {
    const { service, gateway } = await start({}, undefined, api);
    // V1's route answers no message: the adapter answers V0's, so clients see one outcome.
    expect(await addToken(gateway, 'ghp_test_token', 'github.com')).toEqual({
      __typename: 'AddGitProviderTokenPayload',
      statusMessage: 'Git providers stored',
    });

    const conversationId = 'c0ffee00c0ffee00c0ffee00c0ffee00';
    const input = { conversationId, ...EVERY_SHARED_FIELD, ...(api === 'v0' ? V0_ONLY_FIELDS : {}) };
    const { body } = await create(gateway, input);
    expect(body.errors).toBeUndefined();
    const created = body.data?.createConversation;
    if (created?.__typename !== 'CreateConversationPayload') throw new Error(JSON.stringify(body));
    expect(created.conversationId).toBe(conversationId);
    expect(created.conversationStatus).toBe('STARTING');
    expect(created.statusMessage).toBeNull();
    expect(created.conversation).toMatchObject({
      id: encodeGlobalId('Conversation', conversationId),
      conversationId,
      title: defaultTitle(api, conversationId),
      selectedRepository: 'acme/widgets',
      // A suggested task sets the trigger upstream, which proves the nested object arrived.
      trigger: 'SUGGESTED_TASK',
      triggerRaw: 'suggested_task',
    });
    expect(created.conversation?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    if (api === 'v1') {
      // V1: the whole task goes in the start request (later app servers build its prompt from it).
      const tasks = await rest<{ items: Array<{ request: Record<string, unknown> }> }>(
        service.url,
        '/api/v1/app-conversations/start-tasks/search',
        { key: KEY },
      );
      expect(tasks.body.items[0]?.request.suggested_task).toEqual({
        git_provider: 'github',
        task_type: 'FAILING_CHECKS',
        repo: 'acme/widgets',
        issue_number: 42,
        title: 'CI is red',
      });
    }

    // Read back by raw id once started (V1: the conversation exists upstream once its start task is READY).
    await settled(gateway, conversationId);
    const read = await gateway.execute(GetConversationDocument, { id: conversationId }, { key: KEY });
    expect(read.body.data?.conversation).toMatchObject({
      conversationId,
      status: 'RUNNING',
      selectedRepository: 'acme/widgets',
      selectedBranch: 'main',
      gitProvider: 'GITHUB',
      gitProviderRaw: 'github',
      trigger: 'SUGGESTED_TASK',
      prNumbers: [],
    });

    // The same id again: V0 joins (metadata unchanged); V1 has no join and starts it anew with the
    // new request (docs/upstream-apis.md, "Order of the list").
    const again = await create(gateway, { conversationId, selectedBranch: 'other' });
    const againPayload = again.body.data?.createConversation;
    if (againPayload?.__typename !== 'CreateConversationPayload') throw new Error(JSON.stringify(again.body));
    expect(againPayload.conversationId).toBe(conversationId);
    // V1 re-saves it when the new start task is READY: until then the old record still reads.
    const branch = async () =>
      (await gateway.execute(GetConversationDocument, { id: conversationId }, { key: KEY })).body.data
        ?.conversation?.selectedBranch;
    await expect.poll(branch, { timeout: 5_000, interval: 20 }).toBe(api === 'v0' ? 'main' : 'other');

    // The secrets sent in the input never reach a log line.
    const logText = gateway.logs().join('\n');
    for (const secret of ['ghp_test_token', 'sse-secret', 'shttp-secret', 'env-secret', KEY]) {
      expect(logText).not.toContain(secret);
    }
  });

  it('createMicroagent alone fills repository and trigger; Bearer callers get OPENHANDS_API', async () => {
    const { gateway } = await start({}, undefined, api);
    await addToken(gateway, 'ghp_seed');
    const microagent = await create(gateway, {
      createMicroagent: { repo: 'acme/agents', gitProvider: 'GITHUB' },
    });
    const payload = microagent.body.data?.createConversation;
    if (payload?.__typename !== 'CreateConversationPayload') throw new Error(JSON.stringify(microagent.body));
    expect(payload.conversation).toMatchObject({
      selectedRepository: 'acme/agents',
      trigger: 'MICROAGENT_MANAGEMENT',
    });

    const viaBearer = await create(gateway, {}, { bearer: KEY });
    const bearerPayload = viaBearer.body.data?.createConversation;
    if (bearerPayload?.__typename !== 'CreateConversationPayload')
      throw new Error(JSON.stringify(viaBearer.body));
    expect(bearerPayload.conversation?.trigger).toBe('OPENHANDS_API');
  });

  it('addGitProviderToken makes a repository accessible; unsetProviderTokens logs out again', async () => {
    const { gateway } = await start({}, undefined, api);
    const PRIVATE = { repository: 'acme/private', gitProvider: 'GITHUB' };
    /**
     * What creating a conversation on the private repository comes to. V0 checks access while it answers
     * the create; V1 answers a start task at once and fails it later, so the conversation reads ERROR
     * (docs/upstream-apis.md, "A failed start is readable and coded").
     */
    const outcome = async (): Promise<string | undefined> => {
      const { body } = await create(gateway, PRIVATE);
      const created = body.data?.createConversation;
      if (created?.__typename === 'UpstreamDomainError') return `refused: ${created.message}`;
      if (created?.__typename !== 'CreateConversationPayload') throw new Error(JSON.stringify(body));
      await settled(gateway, created.conversationId);
      return statusOf(gateway, created.conversationId);
    };
    const refused = api === 'v0' ? 'refused: Unable to access repo acme/private' : 'ERROR';

    expect(await outcome()).toBe(refused);
    await addToken(gateway, 'ghp_x');
    expect(await outcome()).toBe('RUNNING');

    const unset = await gateway.execute(UnsetProviderTokensDocument, {}, { key: KEY });
    expect(unset.body.errors).toBeUndefined();
    // V1's DELETE answers no message: the adapter answers V0's.
    expect(unset.body.data?.unsetProviderTokens).toEqual({
      statusMessage: 'Unset Git provider tokens',
      entries: [{ key: 'message', value: 'Unset Git provider tokens' }],
    });
    expect(await outcome()).toBe(refused);
  });
});

describe('createConversation on v1: inputs V1 has no field for', () => {
  it('replayJson and mcpConfig are refused by name, nothing is started, no secret is logged', async () => {
    const { gateway } = await start({}, undefined, 'v1');
    const conversationId = 'c0ffee00c0ffee00c0ffee00c0ffee01';
    const { body } = await gateway.execute(
      CreateConversationDocument,
      { input: { conversationId, ...V0_ONLY_FIELDS } },
      { key: KEY },
    );
    expect(body.data?.createConversation).toMatchObject({
      __typename: 'UpstreamValidationError',
      issues: [
        { loc: ['body', 'replay_json'], msg: 'not available on the V1 API', type: 'unsupported' },
        { loc: ['body', 'mcp_config'], msg: 'not available on the V1 API', type: 'unsupported' },
      ],
    });
    const read = await gateway.execute(GetConversationDocument, { id: conversationId }, { key: KEY });
    expect(read.body.data?.conversation).toBeNull();
    expect(gateway.countCalls('POST', '/api/v1/app-conversations')).toBe(0);
    expect(gateway.logs().join('\n')).not.toMatch(/sse-secret|shttp-secret|env-secret/);
  });
});

describe.each(APIS)('conversations connection on %s', (api) => {
  it('pages 250 conversations with first: 20 (one upstream call per page) and resumes from a middle cursor', async () => {
    // A slow agent keeps 250 V0 conversations from running timers during the test; paging does not care.
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      service: { sessionApiKeys: [KEY], agentTimings: { startupMs: 60_000 } },
    });
    const newestFirst = (await seedConversations(api, service.url, 250, KEY)).reverse();

    const seen: string[] = [];
    const cursors: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page: ListPage = await gateway.execute(
        ListConversationsDocument,
        { first: 20, after },
        { key: KEY },
      );
      expect(page.body.errors).toBeUndefined();
      const connection = page.body.data?.conversations;
      if (!connection) throw new Error('no data');
      pages++;
      seen.push(...connection.edges.map((edge) => edge.node.conversationId));
      cursors.push(...connection.edges.map((edge) => edge.cursor));
      expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
      expect(connection.pageInfo.startCursor).toBe(connection.edges[0]?.cursor ?? null);
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
      expect(after).not.toBeNull();
    }
    expect(pages).toBe(13);
    expect(seen).toEqual(newestFirst);
    // Each page end cursor points straight at the next upstream page: no refetch to skip a page.
    expect(gateway.countCalls('GET', `${searchPath(api)}?`)).toBe(13);

    // Resume from a middle edge (the 48th overall, 8th of the third page).
    const callsBefore = gateway.calls.length;
    const { body } = await gateway.execute(
      ListConversationsDocument,
      { first: 20, after: cursors[47] },
      { key: KEY },
    );
    expect(body.data?.conversations?.edges.map((edge) => edge.node.conversationId)).toEqual(
      newestFirst.slice(48, 68),
    );
    expect(body.data?.conversations?.pageInfo.hasNextPage).toBe(true);
    // Refetch of the cursor's page (skipping through the edge) plus the next page.
    expect(gateway.calls.length - callsBefore).toBe(2);

    // Another page size resumes from the same cursor too.
    const small = await gateway.execute(
      ListConversationsDocument,
      { first: 3, after: cursors[47] },
      { key: KEY },
    );
    expect(small.body.data?.conversations?.edges.map((edge) => edge.node.conversationId)).toEqual(
      newestFirst.slice(48, 51),
    );
  }, 60_000);
});

// V0 only: it checks the filters V0 applies upstream (both-apis.test.ts filters on both).
describe('conversations connection', () => {
  it('keeps fetching short filtered pages, stops at the call bound with a cursor that continues', async () => {
    const { service, gateway } = await start(
      { agentTimings: { startupMs: 60_000 } },
      { filteredPageSize: 10, maxUpstreamCalls: 3 },
    );
    await storeGithubToken(service.url);
    // 60 conversations; newest-first positions 5, 33, 34, 35 and 58 are on the rare repository.
    const rarePositions = new Set([5, 33, 34, 35, 58]);
    const bodies = Array.from({ length: 60 }, (_, oldestFirstIndex) => {
      const newestFirstIndex = 59 - oldestFirstIndex;
      return rarePositions.has(newestFirstIndex)
        ? { repository: 'acme/rare', git_provider: 'github' }
        : { repository: 'acme/common', git_provider: 'github' };
    });
    const newestFirst = (await seed(service.url, bodies)).reverse();
    const rare = [...rarePositions].sort((a, b) => a - b).map((position) => newestFirst[position]);

    const list = (after: string | null) =>
      gateway.execute(ListConversationsDocument, { first: 3, after, repository: 'acme/rare' }, { key: KEY });

    let calls = gateway.calls.length;
    const page1 = (await list(null)).body.data?.conversations;
    // Pages 0-9 (one match), 10-19 and 20-29 (none): the bound of 3 calls is reached.
    expect(page1?.edges.map((edge) => edge.node.conversationId)).toEqual([rare[0]]);
    expect(page1?.pageInfo.hasNextPage).toBe(true);
    expect(gateway.calls.length - calls).toBe(3);
    expect(gateway.calls.at(-1)?.path).toContain('limit=10');

    calls = gateway.calls.length;
    const page2 = (await list(page1?.pageInfo.endCursor ?? null)).body.data?.conversations;
    // Continues at upstream page 30-39 without rescanning the empty pages.
    expect(page2?.edges.map((edge) => edge.node.conversationId)).toEqual([rare[1], rare[2], rare[3]]);
    expect(page2?.pageInfo.hasNextPage).toBe(true);
    expect(gateway.calls.length - calls).toBe(1);

    calls = gateway.calls.length;
    const page3 = (await list(page2?.pageInfo.endCursor ?? null)).body.data?.conversations;
    expect(page3?.edges.map((edge) => edge.node.conversationId)).toEqual([rare[4]]);
    expect(page3?.pageInfo.hasNextPage).toBe(false);
    expect(gateway.calls.length - calls).toBe(2);

    // The trigger filter is forwarded as the wire value; every result matches it.
    const byTrigger = await gateway.execute(
      ListConversationsDocument,
      { first: 100, trigger: 'GUI' },
      { key: KEY },
    );
    // Within the bound of 3 calls of 10: 30 of the 60, and a cursor to go on.
    expect(byTrigger.body.data?.conversations?.edges).toHaveLength(30);
    expect(byTrigger.body.data?.conversations?.pageInfo.hasNextPage).toBe(true);
    expect(gateway.calls.at(-1)?.path).toContain('conversation_trigger=gui');
    const none = await gateway.execute(
      ListConversationsDocument,
      { first: 5, trigger: 'SLACK' },
      { key: KEY },
    );
    expect(none.body.data?.conversations?.edges).toEqual([]);

    // A cursor is bound to its filter.
    const mismatched = await gateway.execute(
      ListConversationsDocument,
      { first: 3, after: page1?.pageInfo.endCursor ?? null },
      { key: KEY },
    );
    expect(mismatched.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  }, 60_000);
});

// On both APIs: the loader's batching is the port's, whichever adapter reads (V1: one `ids=` call).
describe.each(APIS)('conversation, node and nodes on %s', (api) => {
  it('resolves through the per-request loader: listed nodes cost no second call, unknown ids are null', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({ api, service: { sessionApiKeys: [KEY] } });
    const [a, b, c] = await seedConversations(api, service.url, 3, KEY);
    if (!a || !b || !c) throw new Error('seed failed');
    const globalA = encodeGlobalId('Conversation', a);

    // List + conversation + node + nodes of listed ids: one search, zero GETs.
    const before = gateway.calls.length;
    const listed = await gateway.execute(
      ListThenLookUpDocument,
      { first: 3, id: globalA, ids: [encodeGlobalId('Conversation', b), encodeGlobalId('Conversation', c)] },
      { key: KEY },
    );
    expect(listed.body.errors).toBeUndefined();
    expect(listed.body.data?.conversation?.id).toBe(globalA);
    expect(listed.body.data?.node?.id).toBe(globalA);
    expect(listed.body.data?.nodes.map((node) => node?.id)).toEqual([
      encodeGlobalId('Conversation', b),
      encodeGlobalId('Conversation', c),
    ]);
    const spent = gateway.calls.slice(before);
    expect(spent.map((call) => `${call.method} ${call.path.split('?')[0]}`)).toEqual([
      `GET ${searchPath(api)}`,
    ]);

    // nodes with a known id twice and an unknown id: two calls, null for the unknown one (V0: a GET
    // per distinct id; V1: one `ids=` batch, then one start-task search for the id it did not know).
    const unknown = 'ffffffffffffffffffffffffffffffff';
    const mark = gateway.calls.length;
    const nodes = await gateway.execute(
      NodesDocument,
      {
        ids: [
          encodeGlobalId('Conversation', a),
          encodeGlobalId('Conversation', unknown),
          encodeGlobalId('Conversation', a),
        ],
      },
      { key: KEY },
    );
    expect(nodes.body).toEqual({
      data: {
        nodes: [
          {
            __typename: 'Conversation',
            id: globalA,
            conversationId: a,
            title: defaultTitle(api, a),
          },
          null,
          {
            __typename: 'Conversation',
            id: globalA,
            conversationId: a,
            title: defaultTitle(api, a),
          },
        ],
      },
    });
    expect(gateway.calls.length - mark).toBe(2);

    // conversation(id) takes a raw id as well; unknown raw and global ids are null.
    const raw = await gateway.execute(GetConversationDocument, { id: b }, { key: KEY });
    expect(raw.body.data?.conversation?.conversationId).toBe(b);
    const missing = await gateway.execute(GetConversationDocument, { id: unknown }, { key: KEY });
    expect(missing.body).toEqual({ data: { conversation: null } });
    const missingNode = await gateway.execute(
      NodeDocument,
      { id: encodeGlobalId('Conversation', unknown) },
      { key: KEY },
    );
    expect(missingNode.body).toEqual({ data: { node: null } });

    // Garbage ids are the caller's mistake, not an internal error.
    for (const id of ['not a global id!', encodeGlobalId('Unicorn', 'x1')]) {
      const bad = await gateway.execute(GetConversationDocument, { id }, { key: KEY });
      expect(bad.body.errors?.[0]?.extensions?.code, JSON.stringify(bad.body)).toBe('BAD_USER_INPUT');
      expect(bad.body.data?.conversation).toBeNull();
    }
    for (const id of ['%%%', encodeGlobalId('Unicorn', 'x1')]) {
      const badNode = await gateway.execute(NodeDocument, { id }, { key: KEY });
      expect(badNode.body, id).toMatchObject({
        data: { node: null },
        errors: [{ extensions: { code: 'BAD_USER_INPUT' } }],
      });
    }
  });
});
