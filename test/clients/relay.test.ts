/**
 * Relay 21: relay-compiler (its native binary from the npm package) compiles test/clients/relay/ against
 * the committed schema.graphql, so a schema change that breaks Relay fails CI; relay-runtime then runs
 * the compiled artifacts against the real gateway and local service as docs/clients.md sets it up:
 * a `@connection` paged like `usePaginationFragment` does (the `@refetchable` pagination query) with
 * `first` as a variable, the same with a literal `first: 100`, a `@refetchable` Node refetch, the union
 * mutation, and a subscription over graphql-ws. The runs go against both upstream APIs (V0 and V1); the
 * paging tests share one seeded service per API.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from 'graphql-ws';
import {
  type ConcreteRequest,
  commitMutation,
  createOperationDescriptor,
  Environment,
  fetchQuery,
  type GraphQLResponse,
  getRequest,
  getSelector,
  Network,
  Observable,
  type ReaderFragment,
  RecordSource,
  requestSubscription,
  Store,
} from 'relay-runtime';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { PersistedOperations } from '../../src/gateway/protection/limits.ts';
import { APIS, defaultTitle } from '../helpers/both-apis.ts';
import {
  type ClientStack,
  clientStackForTest,
  PAGE,
  SCHEMA_PATH,
  SEEDED,
  type SeededService,
  Seen,
  startSeededService,
  WebSocket,
} from './helpers.ts';

const SOURCES = new URL('./relay/', import.meta.url).pathname;
const RELAY_COMPILER = new URL('../../node_modules/.bin/relay-compiler', import.meta.url).pathname;
/** The compiled artifacts by name (`RelayLiteralPageQuery` etc.). */
let artifacts = new Map<string, unknown>();
const outDirs: string[] = [];

/**
 * Runs relay-compiler over test/clients/relay/ and schema.graphql into a temp dir and imports what it
 * wrote. Relay reads paths relative to its config file, so the config lives in the temp dir too.
 */
async function compileRelay(extraConfig: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'relay-artifacts-'));
  outDirs.push(dir);
  mkdirSync(join(dir, '__generated__'));
  // relay-compiler insists that a persistConfig file exists before it fills it.
  if (extraConfig.persistConfig) writeFileSync(join(dir, 'persisted.json'), '{}');
  writeFileSync(
    join(dir, 'relay.config.json'),
    JSON.stringify({
      src: relative(dir, SOURCES),
      schema: relative(dir, SCHEMA_PATH),
      artifactDirectory: './__generated__',
      language: 'typescript',
      eagerEsModules: true,
      ...extraConfig,
    }),
  );
  const { stdout, stderr } = await promisify(execFile)(
    RELAY_COMPILER,
    [join(dir, 'relay.config.json'), '--noWatchman', '--output', 'quiet-with-errors'],
    { cwd: dir },
  ).catch((error: { stdout?: string; stderr?: string }) => {
    // The compiler's own message names the schema problem; show it as the failure.
    throw new Error(`relay-compiler failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  });
  expect(`${stdout}${stderr}`).not.toMatch(/ERROR/);
  const compiled = new Map<string, unknown>();
  for (const file of readdirSync(join(dir, '__generated__'))) {
    const module = (await import(join(dir, '__generated__', file))) as { default: unknown };
    compiled.set(file.replace(/\.graphql\.ts$/, ''), module.default);
  }
  return { dir, artifacts: compiled };
}

beforeAll(async () => {
  ({ artifacts } = await compileRelay());
}, 60_000);
/** The set compiled with a persistConfig, once for both APIs' persisted-query tests. */
let persistedSet: ReturnType<typeof compileRelay> | null = null;
const compilePersisted = () =>
  (persistedSet ??= compileRelay({ persistConfig: { file: './persisted.json', algorithm: 'SHA256' } }));
afterAll(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

const request = (name: string) => {
  const artifact = artifacts.get(name);
  if (!artifact) throw new Error(`relay-compiler wrote no ${name}`);
  return artifact as ConcreteRequest;
};
const fragment = (name: string) => artifacts.get(name) as ReaderFragment;

/**
 * docs/clients.md's Relay environment: HTTP for queries and mutations, graphql-ws for subscriptions. With
 * `persisted`, operations compiled with a persistConfig travel as their hash (`params.id`) alone.
 */
function relayEnvironment(stack: ClientStack, options: { persisted?: boolean } = {}): Environment {
  const ws = createClient({ url: stack.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  onTestFinished(() => ws.dispose());
  const network = Network.create(
    async (params, variables) => {
      const response = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify(
          options.persisted
            ? {
                operationName: params.name,
                extensions: { persistedQuery: { version: 1, sha256Hash: params.id } },
                variables,
              }
            : { operationName: params.name, query: params.text, variables },
        ),
      });
      return (await response.json()) as GraphQLResponse;
    },
    (params, variables) =>
      Observable.create<GraphQLResponse>((sink) =>
        ws.subscribe(
          { operationName: params.name, query: params.text ?? '', variables },
          sink as Parameters<typeof ws.subscribe>[1],
        ),
      ),
  );
  return new Environment({ network, store: new Store(new RecordSource()) });
}

type Connection = { edges: Array<{ node: unknown }>; pageInfo?: { hasNextPage: boolean; endCursor: string } };

/** Reads a fragment the way useFragment does: the parent's fragment ref -> the fragment's data. */
function readFragment<T>(environment: Environment, name: string, ref: unknown): T {
  const selector = getSelector(fragment(name), ref);
  if (selector === null) throw new Error(`no selector for ${name}`);
  return environment.lookup(selector as Parameters<Environment['lookup']>[0]).data as T;
}

function rowIds(environment: Environment, connection: Connection): string[] {
  return connection.edges.map(
    (edge) =>
      readFragment<{ conversationId: string }>(environment, 'RelayConversationRow_conversation', edge.node)
        .conversationId,
  );
}

describe('Relay 21: relay-compiler', () => {
  it('compiles the fragment set against schema.graphql, with first: 100 left literal in the operation text', () => {
    expect([...artifacts.keys()].sort()).toEqual([
      'RelayConversationDetailRefetchQuery',
      'RelayConversationDetail_conversation',
      'RelayConversationEventsSubscription',
      'RelayConversationListPaginationQuery',
      'RelayConversationListQuery',
      'RelayConversationList_query',
      'RelayConversationRow_conversation',
      'RelayCreateConversationMutation',
      'RelayDeleteConversationMutation',
      'RelayLiteralPageQuery',
      'RelayTranscriptPaginationQuery',
      'RelayTranscript_conversation',
    ]);
    // Conversation.events pages backward under @connection, and delete feeds @deleteRecord (issue 12).
    expect(request('RelayTranscriptPaginationQuery').params.text).toContain(
      'events(last: $count, before: $cursor)',
    );
    expect(JSON.stringify(artifacts.get('RelayDeleteConversationMutation'))).toContain('"deleteRecord"');
    expect(request('RelayLiteralPageQuery').params.text).toContain(
      'conversations(first: 100, after: $cursor)',
    );
    expect(request('RelayConversationDetailRefetchQuery').params.text).toContain('node(id: $id)');
  });
});

describe.each(APIS)('Relay 21 (relay-runtime) on %s', (api) => {
  let upstream: SeededService;
  beforeAll(async () => {
    upstream = await startSeededService(api);
  }, 120_000);
  afterAll(() => upstream?.service.close());

  it('pages 250 conversations with first: 100 as a variable, as usePaginationFragment does (@refetchable + @connection)', async () => {
    const stack = await clientStackForTest(api, { upstream });
    const environment = relayEnvironment(stack);

    const root = request('RelayConversationListQuery');
    await fetchQuery(environment, root, { count: PAGE }).toPromise();
    expect(root.params.text).toContain('conversations(first: $count)');
    const rootData = environment.lookup(
      createOperationDescriptor(getRequest(root), { count: PAGE }).fragment,
    ).data;
    const readList = () =>
      readFragment<{ conversations: Connection }>(environment, 'RelayConversationList_query', rootData)
        .conversations;
    let requests = 1;
    for (let list = readList(); list.pageInfo?.hasNextPage; list = readList()) {
      // The pagination query Relay generated from @refetchable; ConnectionHandler appends the page.
      await fetchQuery(environment, request('RelayConversationListPaginationQuery'), {
        count: PAGE,
        cursor: list.pageInfo.endCursor,
      }).toPromise();
      requests++;
      expect(readList().edges.length).toBe(Math.min(requests * PAGE, SEEDED));
    }
    expect(requests).toBe(Math.ceil(SEEDED / PAGE));
    expect(rowIds(environment, readList())).toEqual(stack.newestFirst);
  });

  it('pages 250 conversations with first: 100 as a literal (with the ids, cursors and __typenames Relay adds)', async () => {
    const stack = await clientStackForTest(api, { upstream });
    const environment = relayEnvironment(stack);

    const query = request('RelayLiteralPageQuery');
    const read = () =>
      (
        environment.lookup(createOperationDescriptor(getRequest(query), { cursor: null }).fragment).data as {
          conversations: Connection;
        }
      ).conversations;
    let cursor: string | null = null;
    let requests = 0;
    for (;;) {
      await fetchQuery(environment, query, { cursor }).toPromise();
      requests++;
      const connection = read();
      expect(connection.edges.length).toBe(Math.min(requests * PAGE, SEEDED));
      if (!connection.pageInfo?.hasNextPage) break;
      cursor = connection.pageInfo.endCursor;
    }
    expect(requests).toBe(Math.ceil(SEEDED / PAGE));
    expect(rowIds(environment, read())).toEqual(stack.newestFirst);
  });

  it('refetches a conversation through Query.node (@refetchable), runs the union mutation and follows a subscription', async () => {
    // Its own service: the conversation it creates is the newest in the list, and would join the paging tests'.
    const stack = await clientStackForTest(api);
    const environment = relayEnvironment(stack);

    const created = await new Promise<Record<string, unknown>>((resolve, reject) => {
      commitMutation(environment, {
        mutation: request('RelayCreateConversationMutation'),
        variables: { input: { initialUserMessage: 'hello from relay' } },
        onCompleted: (response) =>
          resolve((response as { createConversation: Record<string, unknown> }).createConversation),
        onError: reject,
      });
    });
    expect(created).toMatchObject({ __typename: 'CreateConversationPayload', statusMessage: null });

    // A Relay node id of the newest conversation (the one just created), from the first page of the list.
    // V1 lists it once its start task made it a conversation (docs/upstream-apis.md), V0 at once.
    const listQuery = request('RelayConversationListPaginationQuery');
    const readFirstPage = () =>
      readFragment<{ conversations: Connection }>(
        environment,
        'RelayConversationList_query',
        environment.lookup(createOperationDescriptor(getRequest(listQuery), { count: 1 }).fragment).data,
      ).conversations;
    let list: Connection = { edges: [] };
    await vi.waitFor(
      async () => {
        await fetchQuery(environment, listQuery, { count: 1 }).toPromise();
        list = readFirstPage();
        expect(list.edges).toHaveLength(1);
      },
      { timeout: 5_000, interval: 20 },
    );
    const firstNode = readFragment<{ id: string }>(
      environment,
      'RelayConversationRow_conversation',
      list.edges[0]?.node,
    );
    const refetched = (await fetchQuery(environment, request('RelayConversationDetailRefetchQuery'), {
      id: firstNode.id,
    }).toPromise()) as { node: unknown };
    expect(readFragment(environment, 'RelayConversationDetail_conversation', refetched.node)).toMatchObject({
      id: firstNode.id,
      title: defaultTitle(api, String(created.conversationId)),
    });

    type Event = { __typename: string; eventId: number | null; cursor: string; content?: string };
    const events = new Seen<Event>();
    const subscription = requestSubscription(environment, {
      subscription: request('RelayConversationEventsSubscription'),
      variables: { id: created.conversationId },
      onNext: (response) => {
        const event = (response as { conversationEvents?: Event })?.conversationEvents;
        if (event) events.push(event);
      },
      onError: (error) => events.fail(error),
    });
    onTestFinished(() => subscription.dispose());
    await events.until((items) => items.some((event) => event.content === 'You said: hello from relay'));
    expect(events.items.find((event) => event.__typename === 'AgentMessageEvent')).toMatchObject({
      cursor: expect.any(String),
      // V1 event ids are strings, so eventId is null there; `cursor` is the resume token on both
      // (docs/live-events.md, docs/upstream-apis.md).
      eventId: api === 'v0' ? expect.any(Number) : null,
    });
  });

  it('runs Relay persisted queries (persistConfig, SHA256) as the PERSISTED_OPERATIONS_FILE allow-list', async () => {
    const persisted = await compilePersisted();
    // fromFile checks that every key is the sha256 of its document: Relay's file is the gateway's format.
    const allowList = PersistedOperations.fromFile(join(persisted.dir, 'persisted.json'));
    expect(allowList.size).toBe(8); // every query, mutation and subscription of operations.ts
    const stack = await clientStackForTest(api, { seeded: 3, hardening: { persistedOperations: allowList } });
    const environment = relayEnvironment(stack, { persisted: true });

    const root = persisted.artifacts.get('RelayConversationListQuery') as ConcreteRequest;
    expect(root.params.text).toBeNull();
    await fetchQuery(environment, root, { count: PAGE }).toPromise();
    const list = readFragment<{ conversations: Connection }>(
      environment,
      'RelayConversationList_query',
      environment.lookup(createOperationDescriptor(getRequest(root), { count: PAGE }).fragment).data,
    ).conversations;
    expect(rowIds(environment, list)).toEqual(stack.newestFirst);

    const arbitrary = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(
      ((await arbitrary.json()) as { errors: Array<{ extensions: unknown }> }).errors[0]?.extensions,
    ).toEqual({
      code: 'PERSISTED_QUERY_ONLY',
    });
  });
});
