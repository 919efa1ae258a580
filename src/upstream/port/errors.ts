/**
 * The outcomes of upstream calls a client branches on (the errors plugin's channel 1), whichever API
 * answers: each adapter turns its own refusals into these, and the schema exposes them as error types
 * (src/schema/errors.ts, src/schema/history.ts). Transport and status failures are not here: they are
 * coded once, in src/upstream/failures.ts.
 */
import { GraphQLError } from 'graphql';
import { ERROR_CATALOGUE, type ErrorCode } from '../../errors.ts';

/** Base of the outcomes a client branches on (errors plugin channel 1). Also a coded GraphQLError so
 * that, thrown from a field without an error union, it still reaches the client with a code. */
export class DomainError extends GraphQLError {
  constructor(
    code: ErrorCode,
    message: string = ERROR_CATALOGUE[code].message,
    extensions: Record<string, string> = {},
  ) {
    super(message, { extensions: { code, ...extensions } });
    this.name = 'DomainError';
  }
}

/** One field problem reported by the upstream's validation (FastAPI 422). */
export interface ValidationIssue {
  /** Where, as the upstream names it (`body`, `mcp_config`, ...); numbers become strings. */
  loc: string[];
  msg: string;
  type: string;
}

/** The upstream rejected the input (422). Carries the per-field detail but never the echoed input. */
export class UpstreamValidationError extends DomainError {
  constructor(readonly issues: ValidationIssue[]) {
    const first = issues[0];
    super(
      'UPSTREAM_VALIDATION',
      first
        ? `The conversation service rejected the input at ${first.loc.join('.')}: ${first.msg}`
        : 'The conversation service rejected the input.',
    );
    this.name = 'UpstreamValidationError';
  }
}

/**
 * The upstream refused with a readable reason: a 400 with `msg_id` (e.g. missing settings), or any
 * other 4xx with a `message` or string `detail` (then `msgId` is null). The message is scrubbed of
 * the caller's secrets. Thrown from a field without an error union (history, sendMessage's reads), the
 * reason id travels as `extensions.msgId`.
 */
export class UpstreamDomainError extends DomainError {
  constructor(
    message: string,
    readonly msgId: string | null,
  ) {
    super('UPSTREAM_REFUSED', message, msgId === null ? {} : { msgId });
    this.name = 'UpstreamDomainError';
  }
}

/** The conversation does not exist for this caller (unknown, deleted, or another tenant's). */
export class ConversationNotFoundError extends DomainError {
  constructor(readonly conversationId: string) {
    super('CONVERSATION_NOT_FOUND');
    this.name = 'ConversationNotFoundError';
  }
}

/** The conversation exists but belongs to someone else, and the upstream says so (rename's 403). */
export class PermissionDeniedError extends DomainError {
  constructor(
    readonly conversationId: string,
    readonly msgId: string,
  ) {
    super('PERMISSION_DENIED');
    this.name = 'PermissionDeniedError';
  }
}

/** Why a workspace cannot be read now (`extensions.reason` of WORKSPACE_NOT_RUNNING). */
export type WorkspaceNotRunningReason = 'PAUSED' | 'STOPPED' | 'STARTING';

/**
 * The conversation's runtime (V0) or sandbox (V1) is not running, so its workspace cannot be read or
 * written; the gateway never starts or resumes one for that (startConversation does).
 */
export class WorkspaceNotRunningError extends DomainError {
  constructor(readonly reason: WorkspaceNotRunningReason) {
    super('WORKSPACE_NOT_RUNNING', undefined, { reason });
    this.name = 'WorkspaceNotRunningError';
  }
}

/** The connected upstream's API has no such thing (commits on V0): `extensions.api` names the API. */
export class NotOnThisApiError extends DomainError {
  constructor(readonly api: 'v0' | 'v1') {
    super('NOT_ON_THIS_API', undefined, { api });
    this.name = 'NotOnThisApiError';
  }
}
