/**
 * Two gateway processes (the CLI) sharing one real redis-server, behind real HAProxy running
 * deploy/haproxy.cfg, in front of the real local service, once per upstream API (V0 and V1, the
 * replicas started with UPSTREAM_API). What docs/operations.md's "Running several replicas" promises:
 * one rate-limit budget across replicas, APQ documents registered once, Redis killed / frozen under
 * load costs no operation, a subscriber survives its replica's kill -9 exactly (resuming by `cursor`,
 * the token both APIs have), and Redis never holds a credential (the caller's, nor V1's sandbox key).
 */
import { createHash } from 'node:crypto';
import type { ExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { APIS, type Api } from '../helpers/both-apis.ts';
import { rest, startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';
import {
  replicaTools,
  type SpawnedGateway,
  spawnGateway,
  startHaproxy,
  stopChild,
  TestRedis,
  tempDir,
} from '../helpers/replicas.ts';

const tools = replicaTools();

/** The replicas' budget: 100 operations per 10 s window (RATE_LIMIT_PER_SECOND=10, BURST=100). */
const BUDGET = 100;
const TYPENAME = '{ __typename }';
/** An operation that reaches the upstream (the replicas' adapter for the API under test). */
const NEWEST = '{ conversations(first: 1) { edges { cursor } } }';

type Answer = {
  status: number;
  body: ExecutionResult & { errors?: Array<{ extensions?: { code?: string } }> };
};

async function post(url: string, body: unknown, key: string): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const ok = (answer: Answer) => answer.status === 200 && !answer.body.errors && answer.body.data != null;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** `x-shared-state` of a replica's /ready. */
async function sharedState(gateway: SpawnedGateway): Promise<string | null> {
  const response = await fetch(gateway.url.replace(/\/graphql$/, '/ready'));
  return response.status === 200 ? response.headers.get('x-shared-state') : `status ${response.status}`;
}

async function redisGauge(gateway: SpawnedGateway): Promise<string | undefined> {
  const text = await (await fetch(gateway.url.replace(/\/graphql$/, '/metrics'))).text();
  return /^gateway_redis_up (\d)/m.exec(text)?.[1];
}

const warnings = (gateway: SpawnedGateway) => gateway.output().split('"redis":"down"').length - 1;

/** `data` of an operation that must succeed. */
async function data(url: string, query: string, variables: unknown, key: string) {
  const answer = await post(url, { query, variables }, key);
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data as Record<string, unknown>;
}

type StoredEvent = { cursor: string; node: { __typename: string; content?: string } };

/** Every stored event of a conversation through the history connection, oldest first, 100 a page. */
async function history(url: string, id: string, key: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (let after: string | null = null; ; ) {
    const found = await data(
      url,
      `query($id: ID!, $after: String) { conversation(id: $id) { events(first: 100, after: $after) {
        edges { cursor node { __typename ... on AgentMessageEvent { content } } } pageInfo { hasNextPage endCursor } } } }`,
      { id, after },
      key,
    );
    const page = (
      found.conversation as { events: { edges: StoredEvent[]; pageInfo: Record<string, unknown> } }
    ).events;
    events.push(...page.edges);
    if (!page.pageInfo.hasNextPage) return events;
    after = page.pageInfo.endCursor as string;
  }
}

/** The open subscriptions a replica counts on /metrics. */
async function openSubscriptions(gateway: SpawnedGateway): Promise<string | undefined> {
  const text = await (await fetch(gateway.url.replace(/\/graphql$/, '/metrics'))).text();
  return /^graphql_subscriptions_open (\d+)/m.exec(text)?.[1];
}

/**
 * Status updates (and title changes) are sent live and never stored, so they are not in the history;
 * each carries the cursor of the stored event before it (docs/live-events.md).
 */
const LIVE_ONLY = new Set(['StatusUpdateEvent', 'TitleChangedEvent']);

/** The upstream's own session key of a running conversation (V1: its sandbox's), a secret Redis must not see. */
async function upstreamSessionKey(api: Api, serviceUrl: string, id: string): Promise<string | null> {
  if (api === 'v0') {
    return (
      (await rest<{ session_api_key?: string | null }>(serviceUrl, `/api/conversations/${id}`)).body
        .session_api_key ?? null
    );
  }
  const [record] = (
    await rest<Array<{ session_api_key?: string | null }>>(serviceUrl, `/api/v1/app-conversations?ids=${id}`)
  ).body;
  return record?.session_api_key ?? null;
}

describe.skipIf('missing' in tools).each(APIS)('two replicas sharing Redis behind HAProxy, on %s', (api) => {
  const { redisServer, haproxy } = tools as { redisServer: string; haproxy: string };
  let service: TestLocalService;
  let redis: TestRedis;
  let one: SpawnedGateway;
  let two: SpawnedGateway;
  let lb: Awaited<ReturnType<typeof startHaproxy>>;
  let inspector: Redis;
  const dataDir = tempDir('replicas-');
  /** Every credential the tests send: none may appear in Redis. */
  const credentials = new Set<string>();
  const key = (name: string) => {
    const credential = `secret-${name}-${Math.random().toString(36).slice(2)}`;
    credentials.add(credential);
    return credential;
  };

  /** Every key in Redis, with its value and time to live. */
  async function redisEntries(): Promise<Array<{ name: string; value: string; pttl: number }>> {
    await inspector.connect().catch(() => {});
    const names: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await inspector.scan(cursor, 'COUNT', 1000);
      cursor = next;
      names.push(...batch);
    } while (cursor !== '0');
    return Promise.all(
      names.map(async (name) => ({
        name,
        value: (await inspector.get(name)) ?? '',
        pttl: await inspector.pttl(name),
      })),
    );
  }
  const expectNoCredential = (entry: { name: string; value: string }) => {
    for (const credential of credentials) {
      expect(entry.name.includes(credential) || entry.value.includes(credential), entry.name).toBe(false);
    }
  };

  beforeAll(async () => {
    // The agent answers each message 40 ms after the one before: a queue of messages is a burst.
    service = await startTestLocalService({ api, agentTimings: { replyMs: 40 } });
    redis = await TestRedis.start(redisServer);
    const env = {
      UPSTREAM_URL: service.url,
      UPSTREAM_API: api,
      REDIS_URL: redis.url,
      // No REDIS_KEY_SALT: both replicas share DATA_DIR, so the first generates the salt, both use it.
      DATA_DIR: dataDir.path,
      REDIS_REPLICAS_HINT: '2',
      // Above the default 50 ms: on a shared 2-core machine a replica's own event loop sometimes
      // stalls past 50 ms, and each such miss is admitted from the local budget (by design), which
      // is not what the exactness test measures. The frozen-Redis test still shows the deadline.
      REDIS_TIMEOUT_MS: '250',
      RATE_LIMIT_PER_SECOND: '10',
      RATE_LIMIT_BURST: String(BUDGET),
    };
    [one, two] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    lb = await startHaproxy(haproxy, [one.address, two.address]);
    inspector = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    inspector.on('error', () => {}); // Redis is killed on purpose below.
    await vi.waitFor(
      async () => expect([await sharedState(one), await sharedState(two)]).toEqual(['redis', 'redis']),
      { timeout: 5000, interval: 20 },
    );
  }, 60_000);

  afterAll(async () => {
    inspector?.disconnect();
    for (const child of [lb?.child, one?.child, two?.child]) if (child) await stopChild(child);
    await redis?.close();
    await service?.close();
    dataDir.remove();
  });

  it('one budget across both replicas: allowed operations within 2% of the window budget (each alone would allow it twice)', async () => {
    const credential = key('budget');
    const answers: Answer[] = [];
    // 3 x the budget, half through each replica, 8 at a time per replica, inside one 10 s window.
    await Promise.all(
      [one, two].flatMap((gateway) =>
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 19; i++) answers.push(await post(gateway.url, { query: TYPENAME }, credential));
        }),
      ),
    );
    const allowed = answers.filter(ok).length;
    const refused = answers.filter((answer) => answer.status === 429);
    expect(allowed + refused.length).toBe(answers.length);
    expect(Math.abs(allowed - BUDGET) / BUDGET).toBeLessThanOrEqual(0.02);
    expect(refused[0]?.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('an APQ registered through replica 1 is served by replica 2 without the not-found round trip', async () => {
    // A document that reads the upstream: replica 2 runs it through its own adapter.
    const query = `query SharedApq${Date.now()} ${NEWEST}`;
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(query) } };
    const credential = key('apq');
    expect(ok(await post(one.url, { query, extensions }, credential))).toBe(true);
    const onTwo = await post(two.url, { extensions }, credential);
    expect(onTwo.body).toEqual({ data: { conversations: { edges: [] } } });
    // The control: a hash nobody registered is still unknown on replica 2.
    const unknown = { persistedQuery: { version: 1, sha256Hash: sha256(`${query} `) } };
    const missed = await post(two.url, { extensions: unknown }, credential);
    expect(missed.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    // Whoever can write to Redis cannot make a replica run another document under a known hash.
    const honest = `query Planted${Date.now()} { __typename }`;
    await inspector.connect().catch(() => {});
    await inspector.set(
      `cg:apq:${sha256(honest)}`,
      '{ conversations(first: 1) { edges { cursor } } }',
      'EX',
      60,
    );
    const planted = await post(
      two.url,
      { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(honest) } } },
      credential,
    );
    expect(planted.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    await inspector.del(`cg:apq:${sha256(honest)}`);
  });

  it('no Redis key or value contains a credential; every key expires', async () => {
    const entries = await redisEntries();
    expect(entries.some((entry) => entry.name.startsWith('cg:rl:'))).toBe(true);
    expect(entries.some((entry) => entry.name.startsWith('cg:apq:'))).toBe(true);
    for (const entry of entries) {
      expect(entry.name).toMatch(/^cg:(rl|apq):[0-9a-f]{64}$/);
      expectNoCredential(entry);
      expect(entry.pttl).toBeGreaterThan(0);
    }
  });

  it('Redis killed, restarted and frozen under load: 0 failed operations; /ready and /metrics show the degraded state; one warning per change', async () => {
    const apqQuery = `query LoadApq${Date.now()} ${NEWEST}`;
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(apqQuery) } };
    const outcomes: Answer[] = [];
    let running = true;
    // Six callers through HAProxy, well under their budget, each operation a read of the upstream, half
    // of them speaking APQ as Apollo's link does (hash first, the document on PERSISTED_QUERY_NOT_FOUND).
    const callers = Array.from({ length: 6 }, async (_, index) => {
      const credential = key(`load${index}`);
      while (running) {
        if (index % 2 === 0) outcomes.push(await post(lb.url, { query: NEWEST }, credential));
        else {
          let answer = await post(lb.url, { extensions }, credential);
          if (answer.body.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND')
            answer = await post(lb.url, { query: apqQuery, extensions }, credential);
          outcomes.push(answer);
        }
        await sleep(200);
      }
    });
    const warned = [warnings(one), warnings(two)];

    await sleep(500);
    await redis.kill();
    await vi.waitFor(
      async () => expect([await sharedState(one), await sharedState(two)]).toEqual(['local', 'local']),
      { timeout: 5000, interval: 20 },
    );
    expect(await redisGauge(one)).toBe('0');
    const duringOutage = outcomes.length;
    await vi.waitFor(() => expect(outcomes.length).toBeGreaterThan(duringOutage + 10), {
      timeout: 10_000,
      interval: 20,
    });
    await redis.start();
    await vi.waitFor(
      async () => expect([await sharedState(one), await sharedState(two)]).toEqual(['redis', 'redis']),
      { timeout: 10_000, interval: 20 },
    );
    expect(await redisGauge(one)).toBe('1');
    expect([warnings(one), warnings(two)]).toEqual(warned.map((count) => count + 1));

    // Frozen (SIGSTOP): the connection stays open and every command misses its deadline.
    redis.child?.kill('SIGSTOP');
    await vi.waitFor(
      async () => expect([await sharedState(one), await sharedState(two)]).toContain('local'),
      { timeout: 5000, interval: 20 },
    );
    const whileFrozen = outcomes.length;
    await vi.waitFor(() => expect(outcomes.length).toBeGreaterThan(whileFrozen + 10), {
      timeout: 10_000,
      interval: 20,
    });
    redis.child?.kill('SIGCONT');
    await vi.waitFor(
      async () => expect([await sharedState(one), await sharedState(two)]).toEqual(['redis', 'redis']),
      { timeout: 10_000, interval: 20 },
    );
    running = false;
    await Promise.all(callers);

    expect(outcomes.length).toBeGreaterThan(40);
    expect(outcomes.filter((answer) => !ok(answer))).toEqual([]);
  }, 40_000);

  it('a subscriber whose replica is killed with kill -9 during an agent burst resumes through HAProxy with `after`: every stored event once, in order', async () => {
    // One credential per role, each well inside its budget of 100 operations (the open service takes
    // any key as the same caller).
    const [sender, reader, subscriber] = ['resume-send', 'resume-read', 'resume-stream'].map(key) as [
      string,
      string,
      string,
    ];
    const created = await data(
      lb.url,
      `mutation { createConversation(input: {}) { ... on CreateConversationPayload { conversationId } } }`,
      {},
      sender,
    );
    const id = (created.createConversation as { conversationId: string }).conversationId;
    await vi.waitFor(
      async () => {
        const read = await data(
          lb.url,
          `query($id: ID!) { conversation(id: $id) { status } }`,
          { id },
          reader,
        );
        expect(read.conversation).toEqual({ status: 'RUNNING' });
      },
      { timeout: 10_000, interval: 100 },
    );
    const sessionKey = await upstreamSessionKey(api, service.url, id);
    // V1: the running sandbox's key, which the replicas send to its agent server; V0 (not nested) has none.
    expect(sessionKey).toEqual(api === 'v1' ? expect.any(String) : null);
    if (sessionKey) credentials.add(sessionKey);

    // docs/live-events.md's recipe: retry, and resubscribe after the cursor of the last event received
    // (every event has one on both APIs; eventId is null on V1).
    const variables: { id: string; after: string | null; fromBeginning: boolean | null } = {
      id,
      after: null,
      fromBeginning: true,
    };
    const client = createClient({
      url: lb.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'X-Session-API-Key': subscriber },
      retryAttempts: 20,
      shouldRetry: () => true,
    });
    type Event = { __typename: string; cursor: string; content?: string };
    const received: Event[] = [];
    const errors: unknown[] = [];
    const unsubscribe = client.subscribe<{ conversationEvents: Event }>(
      {
        query: `subscription($id: ID!, $after: String, $fromBeginning: Boolean) {
          conversationEvents(conversationId: $id, after: $after, fromBeginning: $fromBeginning) {
            __typename cursor ... on AgentMessageEvent { content }
          }
        }`,
        variables,
      },
      {
        next: (result) => {
          if (result.errors) errors.push(result.errors);
          const event = result.data?.conversationEvents;
          if (event) {
            received.push(event);
            variables.after = event.cursor;
            variables.fromBeginning = null;
          }
        },
        error: (error) => errors.push(error),
        complete: () => {},
      },
    );
    try {
      // The replica holding the stream is the one with an open subscription.
      let holder: SpawnedGateway = one;
      await vi.waitFor(
        async () => {
          const open = [await openSubscriptions(one), await openSubscriptions(two)];
          expect([...open].sort()).toEqual(['0', '1']);
          holder = open[0] === '1' ? one : two;
        },
        { timeout: 10_000, interval: 20 },
      );
      const survivor = holder === one ? two : one;
      // The burst: 60 commands queued through the other replica (each answered 40 ms after the one
      // before), then END; sent while the stream's replica is killed.
      const sending = (async () => {
        for (let i = 0; i < 60; i++) {
          await data(
            survivor.url,
            `mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }`,
            { input: { conversationId: id, content: `run: echo step ${i}` } },
            sender,
          );
        }
        await data(
          survivor.url,
          `mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }`,
          { input: { conversationId: id, content: 'END' } },
          sender,
        );
      })();
      await vi.waitFor(() => expect(received.length).toBeGreaterThanOrEqual(30), {
        timeout: 20_000,
        interval: 20,
      });
      expect(await openSubscriptions(holder)).toBe('1');
      // Mid-burst: the answer to END is at least 60 x 40 ms away.
      expect(received.some((event) => event.content === 'You said: END')).toBe(false);
      await stopChild(holder.child, 'SIGKILL');
      await sending;

      await vi.waitFor(
        () => {
          if (errors.length > 0) throw new Error(`the stream failed: ${JSON.stringify(errors)}`);
          expect(received.some((event) => event.content === 'You said: END')).toBe(true);
        },
        { timeout: 30_000, interval: 20 },
      );
      // The answer to END ends with the agent's state change: read until the stream has that too.
      let stored: StoredEvent[] = [];
      await vi.waitFor(
        async () => {
          stored = await history(survivor.url, id, reader);
          expect(received.map((event) => event.cursor)).toContain(stored.at(-1)?.cursor);
        },
        { timeout: 10_000, interval: 250 },
      );
      expect(errors).toEqual([]);
      expect(stored.length).toBeGreaterThan(100);
      expect(
        received.filter((event) => !LIVE_ONLY.has(event.__typename)).map((event) => event.cursor),
      ).toEqual(stored.map((event) => event.cursor));
      // Nor did the conversation's traffic put a secret in Redis (V1: the sandbox key the replicas
      // called its agent server with).
      for (const entry of await redisEntries()) expectNoCredential(entry);
    } finally {
      unsubscribe();
      await client.dispose();
    }
  }, 60_000);
});
