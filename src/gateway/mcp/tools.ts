/**
 * The MCP tools, each a named GraphQL operation run through the gateway's own Yoga (mcp-route.ts), so
 * limits, costs, rate limits, tenancy and error codes are the GraphQL path's. A tool's input schema is
 * derived from its operation's variables and its output schema from its selection (tool-schemas.ts);
 * `resultPath` names the field whose value becomes `structuredContent`. Selections never include a
 * secret (`Conversation.sessionApiKey`, `Event.raw`): a tool result must not carry one.
 */

/** The protocol's tool annotations (untrusted hints for the client: MCP `ToolAnnotations`). */
interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

/** One tool: a named operation and how to present it. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** One GraphQL operation; its variables are the tool's arguments. */
  document: string;
  /** The root field whose value is the tool's result. */
  resultPath: string;
  annotations: ToolHints;
}

const READ: ToolHints = { readOnlyHint: true, openWorldHint: false };
const CONVERSATION_FIELDS =
  'conversationId title status statusRaw selectedRepository selectedBranch createdAt lastUpdatedAt trigger';

export const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'list_conversations',
    title: 'List conversations',
    description:
      "The caller's conversations, newest first. Pass `pageInfo.endCursor` back as `after` for the next page (`first`: 1-100, default 20).",
    document: `query ListConversations($first: Int, $after: String, $repository: String) {
  conversations(first: $first, after: $after, repository: $repository) {
    edges { cursor node { ${CONVERSATION_FIELDS} } }
    pageInfo { endCursor hasNextPage }
  }
}`,
    resultPath: 'conversations',
    annotations: READ,
  },
  {
    name: 'get_conversation',
    title: 'Get a conversation',
    description: 'One conversation by its id (32 hex characters, or the global id).',
    document: `query GetConversation($id: ID!) {
  conversation(id: $id) { ${CONVERSATION_FIELDS} }
}`,
    resultPath: 'conversation',
    annotations: READ,
  },
  {
    name: 'start_conversation',
    title: 'Start a conversation',
    description:
      'Creates a conversation on a repository (`owner/name`) and branch, and starts its agent with a first message. Answers its `conversationId` at once; `conversation` may be null while it is still starting.',
    document: `mutation StartConversation($repository: String, $selectedBranch: String, $initialUserMessage: String) {
  createConversation(input: { repository: $repository, selectedBranch: $selectedBranch, initialUserMessage: $initialUserMessage }) {
    __typename
    ... on CreateConversationPayload { conversationId conversationStatus conversation { ${CONVERSATION_FIELDS} } }
    ... on Error { message }
  }
}`,
    resultPath: 'createConversation',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'send_message',
    title: 'Send a message',
    description: "Sends a user message to a conversation's agent (starting it if it is stopped).",
    document: `mutation SendMessage($conversationId: ID!, $content: String!) {
  sendMessage(input: { conversationId: $conversationId, content: $content }) {
    __typename
    ... on SendMessagePayload { delivery }
    ... on Error { message }
  }
}`,
    resultPath: 'sendMessage',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'read_events',
    title: 'Read events',
    description:
      "A conversation's stored events, oldest first, after a cursor: pass `pageInfo.endCursor` back as `after` to read what came since (`first`: 1-100, default 20).",
    document: `query ReadEvents($id: ID!, $after: String, $first: Int) {
  conversation(id: $id) {
    events(after: $after, first: $first) {
      edges { node { __typename cursor timestamp source upstreamKind message } }
      pageInfo { endCursor hasNextPage }
    }
  }
}`,
    resultPath: 'conversation',
    annotations: READ,
  },
  {
    name: 'change_agent_state',
    title: "Change the agent's state",
    description: 'Asks the agent to stop, pause, resume or confirm/reject a pending action.',
    document: `mutation ChangeAgentState($conversationId: ID!, $state: RequestableAgentState!) {
  changeAgentState(input: { conversationId: $conversationId, state: $state }) {
    __typename
    ... on ChangeAgentStatePayload { event { cursor } }
    ... on Error { message }
  }
}`,
    resultPath: 'changeAgentState',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'stop_conversation',
    title: 'Stop a conversation',
    description: "Stops a conversation's agent; a later message starts it again.",
    document: `mutation StopConversation($conversationId: ID!) {
  stopConversation(input: { conversationId: $conversationId }) {
    __typename
    ... on StopConversationPayload { wasRunning conversation { conversationId status } }
    ... on Error { message }
  }
}`,
    resultPath: 'stopConversation',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  },
  {
    name: 'workspace_changes',
    title: 'Changed files',
    description:
      "The files changed in a conversation's workspace against its base (the remote branch by default).",
    document: `query WorkspaceChanges($id: ID!, $ref: String) {
  conversation(id: $id) { workspace { changes(ref: $ref) { ref repositories changes { path status } } } }
}`,
    resultPath: 'conversation',
    annotations: READ,
  },
  {
    name: 'workspace_diff',
    title: "One file's diff",
    description: "One file's diff in a conversation's workspace: both texts and a unified patch.",
    document: `query WorkspaceDiff($id: ID!, $path: String!, $ref: String) {
  conversation(id: $id) { workspace { diff(path: $path, ref: $ref) { path binary tooLarge patch } } }
}`,
    resultPath: 'conversation',
    annotations: READ,
  },
  {
    name: 'read_file',
    title: 'Read a file',
    description:
      "One file of a conversation's workspace (text, cut at the gateway's cap and marked truncated).",
    document: `query ReadFile($id: ID!, $path: String!) {
  conversation(id: $id) { workspace { file(path: $path) { path binary truncated size text } } }
}`,
    resultPath: 'conversation',
    annotations: READ,
  },
];
