/**
 * `uploadWorkspaceFiles`: files into a conversation's workspace through the GraphQL multipart request
 * specification (graphql-yoga hands each part over as a WHATWG File). Limits are the gateway's
 * settings, checked before any upstream call: at most `WORKSPACE_UPLOAD_MAX_FILES` files and
 * `WORKSPACE_UPLOAD_MAX_BYTES` in all (the body itself is bounded by the same figure before it is read:
 * src/gateway/protection/limits.ts). Each file lands at `directory/<its name>`, both confined like every
 * workspace path; V1 writes the bytes as sent, V0 (0.53) decodes them as text, which corrupts binary
 * files (docs/workspace.md).
 */
import { codedError } from '../errors.ts';
import {
  ConversationNotFoundError,
  UpstreamDomainError,
  UpstreamValidationError,
} from '../upstream/port/errors.ts';
import type { WorkspaceUpload, WorkspaceUploadResult } from '../upstream/port/workspace.ts';
import { confineWorkspacePath } from '../upstream/workspace-path.ts';
import { builder } from './builder.ts';
import { conversationIdArg } from './events.ts';

const UploadWorkspaceFilesInput = builder.inputType('UploadWorkspaceFilesInput', {
  description: 'Files to put into a conversation workspace.',
  fields: (t) => ({
    conversationId: t.id({ required: true, description: 'The conversation (global id or raw id).' }),
    directory: t.string({
      description: 'Folder the files go into, relative to the workspace root; omitted: the root.',
    }),
    files: t.field({
      type: ['File'],
      required: true,
      description:
        'The files (multipart parts); each keeps its name. An existing file of that name is replaced.',
    }),
  }),
});

const SkippedUploadType = builder
  .objectRef<WorkspaceUploadResult['skipped'][number]>('WorkspaceSkippedUpload')
  .implement({
    description: 'A file the upstream did not write, and why.',
    fields: (t) => ({
      path: t.exposeString('path', { description: 'Where it was to go, relative to the workspace root.' }),
      reason: t.exposeString('reason', { description: 'Why it was not written (scrubbed).' }),
    }),
  });

const UploadWorkspaceFilesPayload = builder
  .objectRef<WorkspaceUploadResult>('UploadWorkspaceFilesPayload')
  .implement({
    description: 'What the upload wrote.',
    fields: (t) => ({
      uploaded: t.exposeStringList('uploaded', {
        description: 'Paths written, relative to the workspace root.',
      }),
      skipped: t.field({
        type: [SkippedUploadType],
        description: 'Files not written, each with its reason.',
        resolve: (result) => result.skipped,
      }),
    }),
  });

builder.mutationField('uploadWorkspaceFiles', (t) =>
  t.field({
    type: UploadWorkspaceFilesPayload,
    description:
      'Uploads files into the workspace (GraphQL multipart request). Browsers must send `graphql-preflight: 1` (CSRF prevention). Paths are confined (WORKSPACE_PATH_REFUSED), the count and size bounded (QUERY_LIMIT_EXCEEDED, PAYLOAD_TOO_LARGE), all before any upstream call.',
    args: {
      input: t.arg({ type: UploadWorkspaceFilesInput, required: true, description: 'What and where.' }),
    },
    errors: {
      types: [ConversationNotFoundError, UpstreamValidationError, UpstreamDomainError],
      directResult: true,
      union: { name: 'UploadWorkspaceFilesResult', description: 'The payload, or why nothing was written.' },
    },
    resolve: async (_root, { input }, context) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      const { uploadMaxFiles, uploadMaxBytes } = context.workspace;
      if (input.files.length === 0) throw codedError('BAD_USER_INPUT', { message: 'input.files: no file.' });
      if (input.files.length > uploadMaxFiles) {
        throw codedError('QUERY_LIMIT_EXCEEDED', {
          message: `At most ${uploadMaxFiles} files per upload (WORKSPACE_UPLOAD_MAX_FILES).`,
          extensions: { limit: 'UPLOAD_FILES' },
        });
      }
      const total = input.files.reduce((sum, file) => sum + file.size, 0);
      if (total > uploadMaxBytes) {
        throw codedError('PAYLOAD_TOO_LARGE', {
          message: `An upload carries at most ${uploadMaxBytes} bytes (WORKSPACE_UPLOAD_MAX_BYTES).`,
        });
      }
      const directory =
        input.directory == null ? '' : confineWorkspacePath(input.directory, 'input.directory', true);
      const uploads: WorkspaceUpload[] = [];
      for (const [index, file] of input.files.entries()) {
        const argument = `input.files[${index}]`;
        const path = confineWorkspacePath(
          directory === '' ? file.name : `${directory}/${file.name}`,
          argument,
        );
        uploads.push({ path, bytes: new Uint8Array(await file.arrayBuffer()) });
      }
      return context.upstream.uploadWorkspaceFiles(conversationId, uploads);
    },
  }),
);
