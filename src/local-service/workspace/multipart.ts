/**
 * `multipart/form-data` request bodies, read with the platform's own parser (the Fetch API's
 * `Response.formData()`, undici's), for the two upload routes: V0's `files` (repeated) and V1's
 * `file` (one).
 */

import { issue, type Loc, type ValidationIssue } from '../validation/issue.ts';

/** FastAPI's 422 item for a form field that should be a file but is a plain value. */
export function notAFileIssue(loc: Loc, value: string): ValidationIssue {
  const msg = "Value error, Expected UploadFile, received: <class 'str'>";
  return issue('value_error', loc, msg, value, { error: {} });
}

/** One part of a form: a file (with the client's file name) or a plain field. */
export type FormPart = { kind: 'file'; fileName: string; bytes: Buffer } | { kind: 'field'; value: string };

/**
 * The parts of a multipart body by field name, in order; null when the body is not a readable
 * `multipart/form-data` body (FastAPI then finds no field: 422 missing).
 */
export async function readMultipart(
  body: Buffer,
  contentType: string | undefined,
): Promise<Map<string, FormPart[]> | null> {
  if (contentType === undefined || !/^multipart\/form-data\s*;/i.test(contentType)) return null;
  let form: FormData;
  try {
    form = await new Response(Uint8Array.from(body), { headers: { 'content-type': contentType } }).formData();
  } catch {
    return null;
  }
  const parts = new Map<string, FormPart[]>();
  for (const [name, value] of form.entries()) {
    const part: FormPart =
      typeof value === 'string'
        ? { kind: 'field', value }
        : { kind: 'file', fileName: value.name, bytes: Buffer.from(await value.arrayBuffer()) };
    parts.set(name, [...(parts.get(name) ?? []), part]);
  }
  return parts;
}
