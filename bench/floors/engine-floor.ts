/**
 * Engine floor of the list and history scenarios: the least a GraphQL server in Node does for the bench's
 * documents. The same plain node:http server and bare undici Pools as the list's reshape floor
 * (http-floor.ts) and the history floor (history-floor.ts), the same upstream calls and the same mapping
 * (list-page.ts, history-page.ts), plus a GraphQL engine in between: what is left between this floor and
 * the gateway is the gateway's own work (plugins, context, limits, logging, metrics, retries, its
 * schema's resolvers), what is left between it and the plain floor is GraphQL itself.
 *
 *   node --import tsx bench/floors/engine-floor.ts --upstream http://127.0.0.1:PORT [--api v0|v1]
 *
 * Every request is read to its end and its body JSON-parsed; its `query` text is looked up in a Map
 * (parsed, validated and compiled by graphql-jit once per distinct text, as any server caches) and run
 * with graphql-jit's `compileQuery`, the engine the gateway runs queries on (@envelop/graphql-jit), over a
 * minimal graphql-js schema: the object types and fields the two documents select, the enums and
 * `DateTime` of the committed schema.graphql. The root fields' resolvers make the upstream calls and
 * return the floors' mapped objects; every other field has the default resolver, the event interface
 * resolves its type by the mapped `__typename` (the gateway by its event kind), `DateTime` serializes
 * the text it is given (the upstream layer already made it canonical UTC). The result is serialized by
 * the compiled query's `stringify` (JSON.stringify: the gateway's HTTP fast path does the same). No
 * plugins, no context building beyond the caller's key, no limits, no logging, no metrics, no retries.
 * Its answers are the gateway's byte for byte (bench/ab.ts checks before it measures).
 *
 * Prints `floor: http://HOST:PORT/graphql` once it listens. Not a product: no errors mapped, a document
 * outside the schema is answered 400 with graphql-js's errors.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  buildSchema,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  Kind,
  parse,
  print,
  validate,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { Pool } from 'undici';
import { serveFloor } from './floor-server.ts';
import { type HistoryNode, historyReader } from './history-page.ts';
import { LIST_PATH, listConnection } from './list-page.ts';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    api: { type: 'string', default: 'v0' },
  },
});
if (!values.upstream) throw new Error('--upstream is required');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');

/** The event types the gateway's `ConversationEvent` interface has (the mapping makes most of them). */
const EVENT_TYPES = [
  'AgentMessageEvent',
  'AgentStateChangedEvent',
  'BrowseEvent',
  'CommandEvent',
  'CommandOutputEvent',
  'ErrorEvent',
  'FileEditEvent',
  'FileReadEvent',
  'FileWriteEvent',
  'FinishEvent',
  'OtherEvent',
  'StatusUpdateEvent',
  'ThinkEvent',
  'TitleChangedEvent',
  'UserMessageEvent',
];
const EVENT_FIELDS =
  'eventId: Int timestamp: DateTime source: EventSource message: String! upstreamKind: String!';

/** The selected part of the gateway's schema, nullability as in schema.graphql. */
const OBJECT_TYPES = `
type Query {
  conversations(first: Int): ConversationConnection
  conversation(id: ID!): Conversation
}
type ConversationConnection { edges: [ConversationEdge!]! pageInfo: PageInfo! }
type ConversationEdge { cursor: String! node: Conversation! }
type PageInfo { endCursor: String hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String }
type Conversation {
  id: ID!
  conversationId: String!
  title: String!
  status: ConversationStatus!
  statusRaw: String
  runtimeStatus: RuntimeStatus
  runtimeStatusRaw: String
  selectedRepository: String
  selectedBranch: String
  gitProvider: GitProvider
  gitProviderRaw: String
  trigger: ConversationTrigger
  triggerRaw: String
  numConnections: Int!
  url: String
  sessionApiKey: String
  createdAt: DateTime
  lastUpdatedAt: DateTime
  prNumbers: [Int!]!
  events(last: Int): ConversationEventConnection
}
type ConversationEventConnection { edges: [ConversationEventEdge!]! pageInfo: PageInfo! }
type ConversationEventEdge { cursor: String! node: ConversationEvent! }
interface ConversationEvent { ${EVENT_FIELDS} }
type AgentStateChangeRequestedEvent implements ConversationEvent {
  ${EVENT_FIELDS} requestedState: AgentState! requestedStateRaw: String!
}
${EVENT_TYPES.map((name) => `type ${name} implements ConversationEvent { ${EVENT_FIELDS} }`).join('\n')}
scalar DateTime
`;

/** The enums the documents select, as the gateway's committed schema defines them (values kept in step). */
const ENUMS = new Set([
  'ConversationStatus',
  'RuntimeStatus',
  'GitProvider',
  'ConversationTrigger',
  'EventSource',
  'AgentState',
]);
const committed = parse(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
const enumTypes = committed.definitions
  .filter((d) => d.kind === Kind.ENUM_TYPE_DEFINITION && ENUMS.has(d.name.value))
  .map((d) => print(d));
if (enumTypes.length !== ENUMS.size) throw new Error(`schema.graphql lacks one of ${[...ENUMS].join(', ')}`);

// buildSchema's custom scalar serializes by identity: the least DateTime can do.
const schema = buildSchema(`${OBJECT_TYPES}\n${enumTypes.join('\n')}`);

/** What each resolver gets: the caller's key (the gateway builds its whole request context here). */
interface Caller {
  key: string | undefined;
}

const listPool = new Pool(values.upstream, { connections: 64, pipelining: 1 });
const reader = historyReader(values.upstream, api);
/** A root field of the schema, to give it its resolver. */
function rootField(name: string): GraphQLField<unknown, Caller> {
  const field = (schema.getQueryType() as GraphQLObjectType).getFields()[name];
  if (!field) throw new Error(`the schema has no Query.${name}`);
  return field;
}
rootField('conversations').resolve = async (_root, _args, caller) => {
  const upstream = await listPool.request({
    path: LIST_PATH[api],
    method: 'GET',
    headers: caller.key === undefined ? {} : { 'x-session-api-key': caller.key },
  });
  return listConnection(await upstream.body.text(), api);
};
rootField('conversation').resolve = async (_root, args: { id: string }, caller) => {
  const events = await reader.read(args.id, caller.key);
  return events === null ? null : { events };
};
(schema.getType('ConversationEvent') as GraphQLInterfaceType).resolveType = (node: HistoryNode) =>
  node.__typename;

/** Compiled documents by query text. */
const compiled = new Map<string, CompiledQuery>();

/** The compiled query of `text`, or graphql-js's errors for it. */
function compile(
  text: string,
  operationName: string | undefined,
): CompiledQuery | { errors: readonly unknown[] } {
  let found = compiled.get(text);
  if (found) return found;
  let document: ReturnType<typeof parse>;
  try {
    document = parse(text);
  } catch (error) {
    return { errors: [error] };
  }
  const errors = validate(schema, document);
  if (errors.length > 0) return { errors };
  const result = compileQuery(schema, document, operationName);
  if (!isCompiledQuery(result)) return { errors: result.errors ?? [] };
  found = result;
  compiled.set(text, found);
  return found;
}

serveFloor({
  label: `engine, ${api}`,
  readBody: true,
  async answer(req, res, body) {
    const params = JSON.parse(body) as {
      query: string;
      variables?: Record<string, unknown> | null;
      operationName?: string | null;
    };
    const query = compile(params.query, params.operationName ?? undefined);
    if (!('query' in query)) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify(query));
      return null;
    }
    const key = req.headers['x-session-api-key'];
    const caller: Caller = { key: typeof key === 'string' ? key : undefined };
    return query.stringify(await query.query(undefined, caller, params.variables));
  },
  close: () => Promise.all([listPool.close(), reader.close()]),
});
