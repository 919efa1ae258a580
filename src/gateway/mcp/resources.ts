/**
 * Each conversation as an MCP resource, `openhands://conversations/{conversationId}`: its record and
 * its most recent events as Markdown an agent can read. Listing and reading run GraphQL operations as
 * the caller (graphql-call.ts), so a conversation the caller cannot see is not listed and reads as
 * not found, exactly like one that does not exist.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type ResourceTemplateType,
} from '@modelcontextprotocol/server';
import { failureOf, type GraphQLAnswer, type GraphQLCaller, runOperation } from './graphql-call.ts';

const URI_PREFIX = 'openhands://conversations/';
const MIME_TYPE = 'text/markdown';
/** Resources per `resources/list` page. */
const LIST_PAGE_SIZE = 50;
/** Events shown in a resource's transcript (the newest ones). */
const TRANSCRIPT_EVENTS = 30;
/** Characters of one event's text kept in the transcript. */
const TRANSCRIPT_TEXT_CHARS = 2000;

export const CONVERSATION_TEMPLATE: ResourceTemplateType = {
  uriTemplate: `${URI_PREFIX}{conversationId}`,
  name: 'conversation',
  title: 'OpenHands conversation',
  description:
    'A conversation: its status, repository and branch, and its most recent events (newest last). Subscribe to be told when it changes.',
  mimeType: MIME_TYPE,
};

/** The URI of a conversation's resource. */
function conversationUri(conversationId: string): string {
  return `${URI_PREFIX}${encodeURIComponent(conversationId)}`;
}

/** The conversation id a resource URI names, or null for a URI that is not one of ours. */
export function conversationIdOf(uri: string): string | null {
  if (!uri.startsWith(URI_PREFIX)) return null;
  const rest = uri.slice(URI_PREFIX.length);
  if (rest === '' || rest.includes('/') || rest.includes('?') || rest.includes('#')) return null;
  try {
    return decodeURIComponent(rest);
  } catch {
    return null;
  }
}

const RECORD_FIELDS =
  'conversationId title status statusRaw executionStatus selectedRepository selectedBranch createdAt lastUpdatedAt';

const LIST = `query ListConversationResources($first: Int, $after: String) {
  conversations(first: $first, after: $after) {
    edges { node { ${RECORD_FIELDS} } }
    pageInfo { endCursor hasNextPage }
  }
}`;

const READ = `query ReadConversationResource($id: ID!, $last: Int) {
  conversation(id: $id) {
    ${RECORD_FIELDS}
    events(last: $last) {
      edges { node { __typename cursor timestamp source message ... on AgentStateChangedEvent { agentState } } }
    }
  }
}`;

type Row = Record<string, unknown>;

/** A GraphQL failure as a protocol error carrying the gateway's code in `data.code`. */
function failed(answer: GraphQLAnswer): ProtocolError | null {
  const first = answer.errors?.[0];
  if (!first) return null;
  const failure = failureOf(first);
  return new ProtocolError(ProtocolErrorCode.InternalError, `${failure.code}: ${failure.message}`, {
    code: failure.code,
  });
}

/** `resources/list`: the caller's conversations, newest first, paged by the list's own cursor. */
export async function listConversationResources(
  caller: GraphQLCaller,
  cursor: string | undefined,
  signal: AbortSignal,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const answer = await runOperation(
    caller,
    {
      query: LIST,
      operationName: 'ListConversationResources',
      variables: { first: LIST_PAGE_SIZE, after: cursor ?? null },
    },
    signal,
  );
  const error = failed(answer);
  if (error) throw error;
  const connection = answer.data?.conversations as
    | { edges: { node: Row }[]; pageInfo: { endCursor: string | null; hasNextPage: boolean } }
    | undefined;
  const resources = (connection?.edges ?? []).map(({ node }) => ({
    uri: conversationUri(String(node.conversationId)),
    name: String(node.conversationId),
    title: String(node.title),
    description: [node.status, node.selectedRepository, node.selectedBranch].filter(Boolean).join(' · '),
    mimeType: MIME_TYPE,
    ...(typeof node.lastUpdatedAt === 'string' ? { annotations: { lastModified: node.lastUpdatedAt } } : {}),
  }));
  const page = connection?.pageInfo;
  return page?.hasNextPage && page.endCursor ? { resources, nextCursor: page.endCursor } : { resources };
}

/** `resources/read`: one conversation's record and recent transcript as Markdown. */
export async function readConversationResource(
  caller: GraphQLCaller,
  uri: string,
  signal: AbortSignal,
): Promise<ReadResourceResult> {
  const id = conversationIdOf(uri);
  if (id === null) throw new ResourceNotFoundError(uri);
  const answer = await runOperation(
    caller,
    { query: READ, operationName: 'ReadConversationResource', variables: { id, last: TRANSCRIPT_EVENTS } },
    signal,
  );
  const first = answer.errors?.[0];
  // A malformed id is the caller's mistake about a resource that cannot exist: not found, like a foreign one.
  if (first && failureOf(first).code === 'BAD_USER_INPUT') throw new ResourceNotFoundError(uri);
  const error = failed(answer);
  if (error) throw error;
  const conversation = answer.data?.conversation as Row | null | undefined;
  if (!conversation) throw new ResourceNotFoundError(uri);
  return { contents: [{ uri, mimeType: MIME_TYPE, text: transcript(conversation) }] };
}

/** The Markdown of one conversation. */
function transcript(conversation: Row): string {
  const line = (label: string, value: unknown) =>
    value === null || value === undefined ? [] : [`- ${label}: ${String(value)}`];
  const events = ((conversation.events as { edges?: { node: Row }[] } | null)?.edges ?? []).map(
    ({ node }) => node,
  );
  const lines = [
    `# ${String(conversation.title)}`,
    '',
    ...line('id', conversation.conversationId),
    ...line('status', conversation.status),
    ...line('agent', conversation.executionStatus),
    ...line('repository', conversation.selectedRepository),
    ...line('branch', conversation.selectedBranch),
    ...line('created', conversation.createdAt),
    ...line('updated', conversation.lastUpdatedAt),
    '',
    `## Recent events (${events.length}, newest last)`,
    '',
  ];
  for (const event of events) {
    const state = typeof event.agentState === 'string' ? ` → ${event.agentState}` : '';
    const text = typeof event.message === 'string' ? event.message : '';
    const cut = text.length > TRANSCRIPT_TEXT_CHARS ? `${text.slice(0, TRANSCRIPT_TEXT_CHARS)}…` : text;
    lines.push(
      `- ${String(event.timestamp ?? '')} ${String(event.source ?? '')} ${String(event.__typename)}${state}${cut ? `: ${cut.replaceAll('\n', ' ')}` : ''}`,
    );
  }
  const last = events.at(-1);
  if (last)
    lines.push('', `Cursor of the newest event (for read_events/wait_for_agent): ${String(last.cursor)}`);
  return `${lines.join('\n')}\n`;
}

/** The operations resources run (admitted to an allow-list of persisted operations). */
export const RESOURCE_DOCUMENTS: readonly string[] = [LIST, READ];
