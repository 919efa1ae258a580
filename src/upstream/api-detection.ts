/**
 * Which OpenHands API an upstream speaks, found out from what it answers: JSON from the V1 search
 * (`GET /api/v1/app-conversations/search`) means V1, JSON from V0's (`GET /api/conversations`) means
 * V0; the web UI's page, a 404 or a 405 means "not this API" (UPSTREAM_ROUTE_MISSING, failures.ts).
 * A refusal (401, 429, an outage) says nothing either way: the answer is then unknown, and the caller
 * asks again later (with another caller's credential, or once the upstream is back).
 */
import type { UpstreamCredentials } from './credentials.ts';
import { UpstreamError } from './failures.ts';
import type { UpstreamClient } from './http.ts';

/** The two APIs the gateway has an adapter for. */
export type UpstreamApi = 'v0' | 'v1';

/** What one probe learnt: the API answers, it does not exist there, or nothing. */
type ProbeResult = 'yes' | 'no' | 'unknown';

const PROBES: ReadonlyArray<{ api: UpstreamApi; path: string; list: string }> = [
  { api: 'v1', path: '/api/v1/app-conversations/search', list: 'items' },
  { api: 'v0', path: '/api/conversations', list: 'results' },
];

/** Whether a call is one of the probes (its expected "no such route" is no failure worth a log line). */
export function isDetectionProbe(path: string): boolean {
  return PROBES.some((probe) => path === `${probe.path}?limit=1`);
}

/**
 * Asks both APIs' search once (`limit=1`) with `credentials`. Null when neither answered clearly.
 * A refused probe next to a missing route still decides: the refused API is the one that exists.
 */
export async function detectUpstreamApi(
  client: UpstreamClient,
  credentials: UpstreamCredentials,
  signal?: AbortSignal,
): Promise<UpstreamApi | null> {
  const results = await Promise.all(PROBES.map((probe) => probeOnce(client, credentials, signal, probe)));
  const [v1, v0] = results;
  if (v1 === 'yes' && v0 !== 'yes') return 'v1';
  if (v0 === 'yes' && v1 !== 'yes') return 'v0';
  if (v1 === 'unknown' && v0 === 'no') return 'v1';
  if (v0 === 'unknown' && v1 === 'no') return 'v0';
  return null;
}

async function probeOnce(
  client: UpstreamClient,
  credentials: UpstreamCredentials,
  signal: AbortSignal | undefined,
  probe: (typeof PROBES)[number],
): Promise<ProbeResult> {
  try {
    const body = await client.request<Record<string, unknown> | null>({
      method: 'GET',
      path: `${probe.path}?limit=1`,
      route: `GET ${probe.path}`,
      credentials,
      signal,
    });
    return body !== null && typeof body === 'object' && Array.isArray(body[probe.list]) ? 'yes' : 'no';
  } catch (error) {
    if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') return 'no';
    return 'unknown';
  }
}
