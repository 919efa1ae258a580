/** Conversations created in the local service before a scenario measures anything. */
import type { BenchApi } from './bench-api.ts';
import { startV1Conversations } from './v1-upstream.ts';

/** The seeded conversations, and on V1 the one sandbox (agent server) they all run in. */
export interface Seeded {
  ids: string[];
  /** V1: the sandbox later conversations of the run join (null on V0). */
  sandboxId: string | null;
}

/**
 * Creates `count` conversations for `key`: on V0 ten creates in flight at a time (quick, without
 * tripping anything); on V1 start tasks run concurrently, all in one sandbox (bench/lib/v1-upstream.ts).
 */
export async function seed(
  serviceUrl: string,
  key: string,
  count: number,
  api: BenchApi = 'v0',
): Promise<Seeded> {
  if (api === 'v1') return startV1Conversations(serviceUrl, key, count);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = Array.from({ length: Math.min(10, count - i) }, async () => {
      const response = await fetch(`${serviceUrl}/api/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': key },
        body: '{}',
      });
      const body = (await response.json()) as { conversation_id?: string };
      if (!body.conversation_id) throw new Error(`seeding failed: ${JSON.stringify(body)}`);
      return body.conversation_id;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return { ids, sandboxId: null };
}
