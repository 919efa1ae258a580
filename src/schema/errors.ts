/**
 * The Error interface and the error types a client branches on (channel 1 of the house style).
 * DomainError itself lives with the port (src/upstream/port/errors.ts) because upstream calls throw its
 * subclasses (the arrow points schema -> upstream); ConversationUnavailableError is the schema's own. Everything
 * else is either a coded GraphQLError (channels 2 and 3) or a bug that Yoga masks.
 */
import {
  DomainError,
  UpstreamDomainError,
  UpstreamValidationError,
  type ValidationIssue,
} from '../upstream/port/errors.ts';
import { builder } from './builder.ts';

/** `... on Error { message }` works for every error type. */
export const ErrorInterface = builder.interfaceRef<DomainError>('Error').implement({
  description: 'Common shape of the error types a mutation can answer with.',
  fields: (t) => ({
    message: t.exposeString('message', { description: 'What went wrong, for humans.' }),
  }),
});

const ValidationIssueType = builder.objectRef<ValidationIssue>('ValidationIssue').implement({
  description: 'One problem the conversation service found in the input (its FastAPI validation detail).',
  fields: (t) => ({
    loc: t.exposeStringList('loc', {
      description: 'Where, in upstream (snake_case) terms, e.g. ["body", "mcp_config", "sse_servers", "0"].',
    }),
    msg: t.exposeString('msg', { description: 'The validation message.' }),
    type: t.exposeString('type', {
      description: 'Machine-readable kind, e.g. `extra_forbidden`, `missing`.',
    }),
  }),
});

builder.objectType(UpstreamValidationError, {
  name: 'UpstreamValidationError',
  description: 'The conversation service rejected the input (HTTP 422); `issues` says where and why.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    issues: t.field({
      type: [ValidationIssueType],
      description: 'Each problem found (offending values are not echoed: they may be secrets).',
      resolve: (error) => error.issues,
    }),
  }),
});

builder.objectType(UpstreamDomainError, {
  name: 'UpstreamDomainError',
  description:
    "The conversation service refused with a readable reason (HTTP 400 with `msg_id`, or any other 4xx but 401/403/429 carrying a `message` or `detail` text), e.g. missing settings or an inaccessible repository. The message is the upstream's, with any key or token the caller sent replaced by `[redacted]`.",
  interfaces: [ErrorInterface],
  fields: (t) => ({
    msgId: t.exposeString('msgId', {
      nullable: true,
      description:
        'Stable id of the reason, e.g. `CONFIGURATION$SETTINGS_NOT_FOUND`, `STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR`; null when the upstream gave only a message.',
    }),
  }),
});

/** Error classes for `errors.types` of the mutations. */
export const MUTATION_ERROR_TYPES = [UpstreamValidationError, UpstreamDomainError];
export { DomainError };

/** The conversation cannot be reached to deliver an action (channel 1: a client can retry or give up). */
export class ConversationUnavailableError extends DomainError {
  constructor(
    readonly reason: 'NOT_FOUND' | 'UNREACHABLE',
    message?: string,
  ) {
    super(reason === 'NOT_FOUND' ? 'CONVERSATION_NOT_FOUND' : 'CONVERSATION_UNREACHABLE', message);
  }
}

const UnavailableReasonEnum = builder.enumType('ConversationUnavailableReason', {
  description: 'Why an action could not be delivered.',
  values: {
    NOT_FOUND: { description: 'No conversation with this id for this caller.' },
    UNREACHABLE: { description: 'The conversation service refused or could not be reached.' },
  },
});

builder.objectType(ConversationUnavailableError, {
  name: 'ConversationUnavailableError',
  description: 'The action was not delivered: the conversation does not exist or cannot be reached.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    reason: t.field({ type: UnavailableReasonEnum, description: 'Why.', resolve: (error) => error.reason }),
  }),
});
