/**
 * Workspace archive links: a URL a browser can open as a plain link, for one caller and one
 * conversation, until it expires. A browser sends no credential header on a plain link, so the link
 * itself must let the gateway act for the caller: it holds the conversation id, the expiry and the
 * caller's credential, sealed with AES-256-GCM under the gateway's link key. Nobody without the key can
 * read the credential out of it or change a byte of it (the tag fails), and every gateway sharing the
 * key (workers, replicas: WORKSPACE_LINK_KEY or the data dir's generated key) can open it statelessly.
 * What the link cannot do is tell who opens it: like any download link, whoever holds it before it
 * expires can use it, so its lifetime is short (WORKSPACE_LINK_TTL_SECONDS) and it names one conversation.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { codedError } from '../../errors.ts';
import type { UpstreamCredentials } from '../../upstream/credentials.ts';

/** The path every archive link starts with; the sealed token follows. */
export const ARCHIVE_PATH_PREFIX = '/workspace-archive/';

/** Bound into every seal: a token sealed for anything else never opens here. */
const PURPOSE = Buffer.from('conversation-gateway workspace archive v1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Longer tokens are refused unread (a long credential is still far below this). */
const MAX_TOKEN_LENGTH = 4096;

/** What a link grants. */
export interface ArchiveGrant {
  conversationId: string;
  credentials: UpstreamCredentials;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Seals and opens links under one key. */
export class ArchiveLinks {
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #now: () => number;

  /** `secret`: any length, hashed to the AES key; `ttlSeconds`: how long a link works. */
  constructor(secret: string, ttlSeconds: number, now: () => number = Date.now) {
    this.#key = createHash('sha256').update(secret).digest();
    this.#ttlMs = ttlSeconds * 1000;
    this.#now = now;
  }

  /** A token for `conversationId` and `credentials`, expiring after the TTL. */
  seal(conversationId: string, credentials: UpstreamCredentials): { token: string; expiresAt: number } {
    const expiresAt = this.#now() + this.#ttlMs;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(PURPOSE);
    const plain = Buffer.from(JSON.stringify([conversationId, expiresAt, credentials]));
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return { token: sealed.toString('base64url'), expiresAt };
  }

  /**
   * What `token` grants.
   * @throws GraphQLError ARCHIVE_LINK_INVALID (malformed, altered, another key), ARCHIVE_LINK_EXPIRED
   */
  open(token: string): ArchiveGrant {
    const invalid = () => codedError('ARCHIVE_LINK_INVALID', { refuses: true });
    if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid();
    const sealed = Buffer.from(token, 'base64url');
    if (sealed.length <= IV_BYTES + TAG_BYTES) throw invalid();
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(PURPOSE);
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      plain = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw invalid();
    }
    const [conversationId, expiresAt, credentials] = JSON.parse(plain.toString('utf8')) as [
      string,
      number,
      UpstreamCredentials,
    ];
    if (this.#now() >= expiresAt) throw codedError('ARCHIVE_LINK_EXPIRED', { refuses: true });
    return { conversationId, credentials, expiresAt };
  }
}
