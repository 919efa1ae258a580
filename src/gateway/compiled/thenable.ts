/** Whether a resolver's (or an upstream call's) answer is a promise to wait for. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
