/**
 * `workspaceChanged`: tells a client that a conversation's workspace changed, so a Changes panel
 * refreshes when the agent edits instead of on a timer. Driven by the conversation's live events on
 * its shared upstream socket (the same one `conversationEvents` uses: no extra socket, no polling),
 * debounced (src/upstream/workspace-signal.ts).
 */
import { BridgeError } from '../upstream/port/bridge-error.ts';
import { type WorkspaceChangeSignal, WorkspaceSignals } from '../upstream/workspace-signal.ts';
import { builder } from './builder.ts';
import { conversationIdArg } from './events.ts';

/** Events closer together than this make one signal. */
const DEBOUNCE_MS = 250;

const WorkspaceChangedEventType = builder
  .objectRef<WorkspaceChangeSignal>('WorkspaceChangedEvent')
  .implement({
    description:
      'The agent changed the workspace: re-read `Conversation.workspace.changes` (and any diff on screen). Events within 250 ms make one; nothing is sent without one.',
    fields: (t) => ({
      conversationId: t.exposeString('conversationId', { description: 'The raw conversation id.' }),
      paths: t.exposeStringList('paths', {
        description:
          'Files the agent named, relative to the workspace root when they lie in it; empty when a command ran (it may have changed any file).',
      }),
      causes: t.exposeStringList('causes', {
        description: 'What happened: `FILE_EDIT`, `FILE_WRITE` and/or `COMMAND_OUTPUT`.',
      }),
      at: t.expose('at', { type: 'DateTime', description: 'When the gateway sent it.' }),
    }),
  });

builder.subscriptionField('workspaceChanged', (t) =>
  t.field({
    type: WorkspaceChangedEventType,
    description:
      "A signal each time the agent changes the conversation's workspace (files written or edited, commands run), debounced. Ends with the conversation's live stream, with the same codes as `conversationEvents`.",
    args: {
      conversationId: t.arg.id({ required: true, description: 'The conversation (global id or raw id).' }),
    },
    subscribe: async (_root, args, context) => {
      const conversationId = conversationIdArg(String(args.conversationId), 'conversationId');
      const live = await context.upstream.subscribe(conversationId, null);
      return new WorkspaceSignals(live, conversationId, DEBOUNCE_MS);
    },
    resolve: (item: WorkspaceChangeSignal | BridgeError) => {
      if (item instanceof BridgeError) throw item;
      return item;
    },
  }),
);
