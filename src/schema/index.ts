/** Imports every domain file and exports the built schema. */
import { builder } from './builder.ts';
import './errors.ts';
import { conversationNodeId } from './conversation.ts';
import './conversation-v1.ts';
import './events.ts';
import './agent-actions.ts';
import './history.ts';
import './workspace.ts';
import './workspace-upload.ts';
import './workspace-signal.ts';
import { inlineResolvers } from './inline-resolvers.ts';

/** The gateway's schema (sorted when printed; see scripts/print-schema.ts). */
export const schema = builder.toSchema({ sortSchema: true });
// Resolver calls graphql-jit would make for nothing (see the module); keyed by every node type.
inlineResolvers(schema, { Conversation: conversationNodeId });
