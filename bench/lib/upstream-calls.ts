/**
 * The upstream calls one gateway request makes, read from the gateway's own `upstream_requests_total`
 * (`GET /metrics`, on by default) before and after sending it: a scenario whose direct side claims to
 * make the gateway's calls checks that claim with it before it measures anything.
 */
import type { HttpTarget } from './http-load.ts';

/** `upstream_requests_total` per `METHOD route` (a status other than 200 appended: `-> 404`). */
async function upstreamCounts(gatewayUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', gatewayUrl))).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('upstream_requests_total{')) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] as string, m[2] as string]),
    );
    const call = `${labels.method} ${labels.route}${labels.status === '200' ? '' : ` -> ${labels.status}`}`;
    counts.set(call, (counts.get(call) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

/**
 * The gateway's upstream calls for one request of `target`, sorted, one entry per call, as
 * `GET /api/conversations/:id` (routes as the gateway labels them: ids as `:id`, no query). Nothing
 * else may use the gateway meanwhile; send the request once before, so first-use work (API detection,
 * route discovery) is not counted.
 */
export async function gatewayUpstreamCalls(gatewayUrl: string, target: HttpTarget): Promise<string[]> {
  const before = await upstreamCounts(gatewayUrl);
  const response = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(target.body !== undefined ? { body: target.body } : {}),
  });
  target.check(response.status, await response.text());
  const after = await upstreamCounts(gatewayUrl);
  const calls: string[] = [];
  for (const [call, count] of after) {
    for (let i = 0; i < count - (before.get(call) ?? 0); i++) calls.push(call);
  }
  return calls.sort();
}
