import { badUserInput } from '../errors.ts';
import { base64urlOfText } from '../upstream/base64url-text.ts';

/** Typenames that implement Node; a well-formed id of any other type is the caller's mistake. */
const NODE_TYPENAMES: ReadonlySet<string> = new Set(['Conversation']);

/** Encodes a global id (every node of every page: through the cursors' reused buffer, not a Buffer each). */
export function encodeGlobalId(typename: string, id: string): string {
  return base64urlOfText(`${typename}:${id}`);
}

/**
 * Decodes a global id produced by {@link encodeGlobalId} (standard base64 is accepted too).
 * @throws GraphQLError BAD_USER_INPUT when it is not one
 */
export function decodeGlobalId(globalId: string): { typename: string; id: string } {
  const decoded = tryDecodeGlobalId(globalId);
  if (!decoded) {
    throw badUserInput('Invalid global id.');
  }
  if (!NODE_TYPENAMES.has(decoded.typename)) {
    throw badUserInput(`No object type ${decoded.typename} has global ids.`);
  }
  return decoded;
}

/** Like {@link decodeGlobalId} but answers null instead of throwing. */
export function tryDecodeGlobalId(globalId: string): { typename: string; id: string } | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(globalId)) return null;
  const text = Buffer.from(globalId, 'base64url').toString('utf8');
  const match = /^([A-Z][A-Za-z0-9]*):([A-Za-z0-9_-]{1,128})$/.exec(text);
  if (!match?.[1] || !match[2]) return null;
  return { typename: match[1], id: match[2] };
}
