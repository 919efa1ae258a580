/**
 * The coded failure of a live stream or a sent action, whichever API carries it; its codes are the
 * catalogue's (src/errors.ts). The shared subscriber machinery (src/upstream/live/) ends streams
 * with it and the schema throws it as is.
 */
import { GraphQLError } from 'graphql';
import { ERROR_CATALOGUE, type ErrorCode } from '../../errors.ts';

/** Codes a live stream or a sent action can fail with. */
export type BridgeErrorCode = Extract<
  ErrorCode,
  | 'UNAUTHENTICATED'
  | 'CONVERSATION_NOT_FOUND'
  | 'CONVERSATION_UNREACHABLE'
  | 'CONVERSATION_DELETED'
  | 'CONVERSATION_STOPPED'
  | 'SUBSCRIBER_TOO_SLOW'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_ERROR'
  | 'REQUEST_CANCELLED'
  | 'GATEWAY_SHUTTING_DOWN'
  | 'UPSTREAM_TOO_MANY_CONNECTIONS'
  | 'BAD_USER_INPUT'
>;

/** A coded failure of the bridge; a GraphQLError so it reaches clients unmasked with its code. */
export class BridgeError extends GraphQLError {
  readonly code: BridgeErrorCode;
  constructor(
    code: BridgeErrorCode,
    message: string = ERROR_CATALOGUE[code].message,
    extra: Record<string, unknown> = {},
  ) {
    super(message, { extensions: { code, ...extra } });
    this.name = 'BridgeError';
    this.code = code;
  }
}
