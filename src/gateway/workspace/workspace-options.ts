/**
 * What the gateway's workspace fields, upload and archive links may do: the `workspace` options of
 * createGateway (the CLI fills them from src/settings-workspace.ts).
 */
import { randomBytes } from 'node:crypto';

/** Options of the workspace (createGateway's `workspace`). */
export interface WorkspaceOptions {
  /** Largest text a file read or one diff side returns. @default 1048576 */
  fileMaxBytes?: number;
  /** Largest upload, all its files together. @default 10485760 */
  uploadMaxBytes?: number;
  /** Most files one upload may carry. @default 20 */
  uploadMaxFiles?: number;
  /** Largest archive a link streams; a larger one is cut there. @default 1073741824 */
  archiveMaxBytes?: number;
  /** How long an archive link works, in seconds. @default 300 */
  linkTtlSeconds?: number;
  /** Archives one credential may stream at once. @default 2 */
  archivesPerCredential?: number;
  /** Whether the sandbox's VS Code URL and app ports reach callers. @default false */
  sandboxLinks?: boolean;
  /**
   * Key of the archive links. Gateways that should open each other's links (workers, replicas) need
   * the same one. Secret. @default a random key per gateway
   */
  linkKey?: string;
}

/** The options with every default filled in. */
export type ResolvedWorkspaceOptions = Required<WorkspaceOptions>;

export function resolveWorkspaceOptions(options: WorkspaceOptions = {}): ResolvedWorkspaceOptions {
  return {
    fileMaxBytes: options.fileMaxBytes ?? 1_048_576,
    uploadMaxBytes: options.uploadMaxBytes ?? 10_485_760,
    uploadMaxFiles: options.uploadMaxFiles ?? 20,
    archiveMaxBytes: options.archiveMaxBytes ?? 1_073_741_824,
    linkTtlSeconds: options.linkTtlSeconds ?? 300,
    archivesPerCredential: options.archivesPerCredential ?? 2,
    sandboxLinks: options.sandboxLinks ?? false,
    linkKey: options.linkKey ?? randomBytes(32).toString('hex'),
  };
}
