/**
 * Property test (fast-check) over random upstream record shapes served by the hostile double over real
 * HTTP: whatever the upstream sends in a page (null, missing or mistyped fields, unknown values,
 * timestamps with offsets or without a zone, records that are not records at all), the gateway
 * answers 200 without errors, every readable record comes back in the upstream's order (paging through
 * the whole list with any page size, holes included), and every DateTime is UTC with `Z` naming the
 * instant the upstream meant. Seeded by fast-check; bounded to a few seconds.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { type HostileUpstream, searchPage, startHostileUpstream } from '../helpers/hostile-upstream.ts';
import { post } from '../helpers/http.ts';

const KEY = 'sk-property-caller-key-42';
/** Zone-less timestamps are read in this zone; +05:30 all year (no DST), so expectations stay simple. */
const ZONE = 'Asia/Kolkata';
const ZONE_OFFSET_MINUTES = 330;

let upstream: HostileUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startHostileUpstream();
  gateway = await startTestGateway({
    upstreamUrl: upstream.url,
    upstreamTimeZone: ZONE,
    // Every Conversation field of a list page is over the default cost limit; the limiter and the
    // rate limit have their own tests.
    hardening: { rateLimit: false, queryLimits: { maxCost: 50_000 } },
  });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** Leaves the key out of the record (JSON drops undefined). */
const MISSING = undefined;
const junk = fc.oneof(
  fc.constant(null),
  fc.constant(MISSING),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant({ nested: true }),
  fc.constant(['a', 1]),
);
const text = fc.oneof(fc.string({ maxLength: 12 }), junk);
const enumLike = (known: string[]) =>
  fc.oneof(fc.constantFrom(...known), fc.constantFrom('FUTURE_VALUE', 'telegram', ''), junk);

/** A timestamp the upstream might send, with the instant (ms) and sub-ms digits it means; or junk. */
interface SentTime {
  sent: unknown;
  instantMs: number | null;
  micro: string;
}
const sentTime: fc.Arbitrary<SentTime> = fc.oneof(
  fc
    .record({
      instantMs: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }),
      zone: fc.oneof(
        fc.constant<'Z' | 'none'>('Z'),
        fc.constant<'Z' | 'none'>('none'),
        fc.integer({ min: -12 * 60, max: 14 * 60 }),
      ),
      fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^\d{1,6}$/)),
    })
    .map(({ instantMs, zone, fraction }) => {
      const offset = zone === 'Z' ? 0 : zone === 'none' ? ZONE_OFFSET_MINUTES : zone;
      // The instant the text means: its whole seconds plus the written fraction.
      const wholeSeconds = Math.floor(instantMs / 1000) * 1000;
      const wall = new Date(wholeSeconds + offset * 60_000).toISOString().slice(0, 19);
      const designator =
        zone === 'Z'
          ? 'Z'
          : zone === 'none'
            ? ''
            : `${zone < 0 ? '-' : '+'}${String(Math.floor(Math.abs(zone) / 60)).padStart(2, '0')}:${String(Math.abs(zone) % 60).padStart(2, '0')}`;
      return {
        sent: `${wall}${fraction ? `.${fraction}` : ''}${designator}`,
        instantMs: wholeSeconds + Number(fraction.padEnd(3, '0').slice(0, 3)),
        micro: fraction.slice(3),
      };
    }),
  fc
    .oneof(junk, fc.constantFrom('yesterday', '2025-13-45T99:00:00', '2025-08-14T12:00:00+25:00'))
    .map((sent) => ({ sent, instantMs: null, micro: '' })),
);

/** One entry of a search page: a record (readable id or not) or something that is not a record. */
interface Entry {
  raw: unknown;
  /** The id when the gateway must return this record. */
  readableId: string | null;
  createdAt: SentTime;
  lastUpdatedAt: SentTime;
}

const entry = (index: number): fc.Arbitrary<Entry> => {
  const id = `${index.toString(16).padStart(8, '0')}${'ab12cd34'.repeat(3)}`;
  return fc
    .record({
      idKind: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'null', 'missing', 'number', 'unusable'),
      notARecord: fc.oneof(
        { weight: 12, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
      title: text,
      status: enumLike(['STARTING', 'RUNNING', 'STOPPED']),
      runtimeStatus: enumLike(['STATUS$READY', 'STATUS$STOPPED']),
      trigger: enumLike(['gui', 'resolver']),
      gitProvider: enumLike(['github', 'gitlab']),
      numConnections: fc.oneof(fc.nat(20), fc.integer({ min: -5, max: -1 }), fc.constant(2 ** 40), junk),
      prNumber: fc.oneof(
        fc.array(fc.oneof(fc.nat(), fc.string(), fc.constant(null)), { maxLength: 3 }),
        junk,
      ),
      url: text,
      sessionApiKey: text,
      repository: text,
      branch: text,
      createdAt: sentTime,
      lastUpdatedAt: sentTime,
    })
    .map((shape) => {
      if (shape.notARecord) {
        return {
          raw: shape.title ?? null,
          readableId: null,
          createdAt: shape.createdAt,
          lastUpdatedAt: shape.lastUpdatedAt,
        };
      }
      const conversationId =
        shape.idKind === 'valid'
          ? id
          : shape.idKind === 'null'
            ? null
            : shape.idKind === 'missing'
              ? MISSING
              : shape.idKind === 'number'
                ? index
                : `${id} with spaces`;
      return {
        raw: {
          conversation_id: conversationId,
          title: shape.title,
          status: shape.status,
          runtime_status: shape.runtimeStatus,
          trigger: shape.trigger,
          git_provider: shape.gitProvider,
          num_connections: shape.numConnections,
          pr_number: shape.prNumber,
          url: shape.url,
          session_api_key: shape.sessionApiKey,
          selected_repository: shape.repository,
          selected_branch: shape.branch,
          created_at: shape.createdAt.sent,
          last_updated_at: shape.lastUpdatedAt.sent,
          some_future_field: { added: 'later' },
        },
        readableId: shape.idKind === 'valid' ? id : null,
        createdAt: shape.createdAt,
        lastUpdatedAt: shape.lastUpdatedAt,
      };
    });
};

const pageOfEntries = fc
  .integer({ min: 0, max: 20 })
  .chain((length) => fc.tuple(...Array.from({ length }, (_, index) => entry(index))));

/** Serves `entries` as the upstream would: offset tokens, `limit` per page, and each record by id. */
function serve(entries: Entry[]) {
  upstream.reset();
  upstream.on('GET', '/api/conversations', (request) => {
    const offset = Number(request.query.get('page_id') ?? 0);
    const limit = Number(request.query.get('limit') ?? 20);
    const next = offset + limit < entries.length ? String(offset + limit) : null;
    return {
      json: searchPage(
        entries.slice(offset, offset + limit).map((e) => e.raw),
        next,
      ),
    };
  });
  upstream.on('GET', /^\/api\/conversations\/[^/]+$/, (request) => ({
    json: entries.find((e) => e.readableId !== null && request.path.endsWith(e.readableId))?.raw ?? null,
  }));
}

const FIELDS = `conversationId title status statusRaw runtimeStatus runtimeStatusRaw trigger triggerRaw
  gitProvider gitProviderRaw selectedRepository selectedBranch numConnections url sessionApiKey
  createdAt lastUpdatedAt prNumbers`;
const LIST = `query Page($first: Int!, $after: String) { conversations(first: $first, after: $after) {
  edges { node { ${FIELDS} } } pageInfo { hasNextPage endCursor } } }`;
const ONE = `query One($id: ID!) { conversation(id: $id) { ${FIELDS} } }`;

type Node = Record<string, unknown> & { conversationId: string; createdAt: unknown; lastUpdatedAt: unknown };

/** The DateTime the gateway returned names the instant that was sent (or is null when none was readable). */
function expectSameInstant(returned: unknown, sent: SentTime) {
  if (sent.instantMs === null) {
    expect(returned).toBeNull();
    return;
  }
  expect(returned).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,}Z$/);
  expect(Date.parse(returned as string)).toBe(sent.instantMs);
  expect((returned as string).slice(23, -1)).toBe(sent.micro);
}

function checkNode(node: Node, sent: Entry) {
  expect(typeof node.title === 'string' && node.title !== '').toBe(true);
  expectSameInstant(node.createdAt, sent.createdAt);
  expectSameInstant(node.lastUpdatedAt, sent.lastUpdatedAt);
}

describe('random record shapes from a hostile upstream', () => {
  it('no 5xx, no error, no readable record lost or reordered across pages, every DateTime UTC with Z', async () => {
    await fc.assert(
      fc.asyncProperty(pageOfEntries, fc.integer({ min: 1, max: 8 }), async (entries, pageSize) => {
        serve(entries);
        const readable = entries.filter((e) => e.readableId !== null);
        const seen: Node[] = [];
        let after: string | null = null;
        for (let requests = 0; requests < 40; requests++) {
          const answer = await post(
            gateway.url,
            { query: LIST, variables: { first: pageSize, after } },
            { 'x-session-api-key': KEY },
          );
          expect(answer.status).toBe(200);
          expect(answer.json?.errors).toBeUndefined();
          const connection = answer.json?.data?.conversations as {
            edges: Array<{ node: Node }>;
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
          };
          seen.push(...connection.edges.map((edge) => edge.node));
          if (!connection.pageInfo.hasNextPage) break;
          after = connection.pageInfo.endCursor;
        }
        expect(seen.map((node) => node.conversationId)).toEqual(readable.map((e) => e.readableId));
        for (const [i, node] of seen.entries()) checkNode(node, readable[i] as Entry);

        // The same record by id (a lookup, not the list): the same fallbacks and conversions.
        const probe = readable[0];
        if (probe) {
          const one = await post(
            gateway.url,
            { query: ONE, variables: { id: probe.readableId } },
            { 'x-session-api-key': KEY },
          );
          expect(one.status).toBe(200);
          expect(one.json?.errors).toBeUndefined();
          checkNode(one.json?.data?.conversation as Node, probe);
        }
      }),
      { numRuns: 40 },
    );
  });
});
