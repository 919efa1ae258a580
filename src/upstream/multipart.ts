/**
 * A `multipart/form-data` body of files, built byte for byte (RFC 7578), for the upload routes of both
 * APIs (V0: repeated field `files`; V1: one field `file`). Built here rather than with a FormData so the
 * bytes sent are exactly the file's, the body's length is known, and no other copy of undici's fetch
 * machinery is involved.
 */
import { randomBytes } from 'node:crypto';

/** One file part. */
export interface MultipartFile {
  field: string;
  /** The part's `filename`; `"`, CR and LF are percent-encoded as browsers do (WHATWG HTML). */
  fileName: string;
  bytes: Uint8Array;
}

/** The body and its content type (with the boundary). */
export function multipartBody(files: readonly MultipartFile[]): { bytes: Uint8Array; contentType: string } {
  const boundary = `----conversation-gateway-${randomBytes(18).toString('hex')}`;
  const parts: Uint8Array[] = [];
  for (const file of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(file.field)}"; filename="${quoted(
          file.fileName,
        )}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { bytes: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

function quoted(value: string): string {
  return value.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}
