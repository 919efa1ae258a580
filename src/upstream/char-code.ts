/**
 * The UTF-16 code unit of `text` at `at`, for the checks that read upstream text character by
 * character (ids, timestamps).
 *
 * Not `text.charCodeAt(at)`: in the gateway, V8's optimizing compiler turns that property load into a
 * generic lookup (a call of V8's LoadIC) at each call: 14 of them per timestamp were 1,700 of its
 * 3,400 machine instructions (callgrind, the list bench's gateway). Through `String.prototype` the
 * method is a constant and the call compiles to the character load itself.
 */
export function charCodeAt(text: string, at: number): number {
  return String.prototype.charCodeAt.call(text, at);
}
