/**
 * What a suite needs to run the same graph tests on both OpenHands APIs: the list of APIs, and seeding
 * conversations straight on the bundled service in each API's own way (V0: one create call; V1: a
 * start task, followed until READY), plus the facts that differ on purpose (the default title).
 *
 *   describe.each(APIS)('... on %s', (api) => { ... await seedConversations(api, service.url, 3, KEY) ... });
 */
import { expect } from 'vitest';
import { rest } from './local-service.ts';

/** The APIs the gateway fronts. */
export const APIS = ['v0', 'v1'] as const;
export type Api = (typeof APIS)[number];

/**
 * How a gateway knows which API answers: told (`--upstream-api v0|v1`), or found out (`auto`) with the
 * test's first operation (test/helpers/gateway.ts, `undetectedGateway`).
 */
export type ApiMode = 'configured' | 'detected';

/**
 * Every API, configured and left to detection: what the live suites run on, since a stream opened
 * while the API is being found out takes a path of its own (src/upstream/api-switch.ts, `subscribe`).
 */
export const LIVE_MODES: ReadonlyArray<readonly [Api, ApiMode]> = APIS.flatMap((api) => [
  [api, 'configured'] as const,
  [api, 'detected'] as const,
]);

/** The title the upstream gives a new conversation. */
export function defaultTitle(api: Api, conversationId: string): string {
  return api === 'v0' ? `Conversation ${conversationId.slice(0, 5)}` : `Conversation ${conversationId}`;
}

/** The path prefix of the API's search (for counting upstream calls). */
export function searchPath(api: Api): string {
  return api === 'v0' ? '/api/conversations' : '/api/v1/app-conversations/search';
}

/**
 * Creates `count` conversations on the service, one after the other, and answers their ids oldest
 * first. V1 ones are READY (they exist, newest `created_at` last) when this returns; all of them share
 * the first one's sandbox, so the app server's cap on running sandboxes pauses none of them.
 */
export async function seedConversations(
  api: Api,
  url: string,
  count: number,
  key?: string,
): Promise<string[]> {
  const ids: string[] = [];
  let sandboxId: string | null = null;
  for (let i = 0; i < count; i++) {
    if (api === 'v0') {
      const created = await rest<{ conversation_id: string }>(url, '/api/conversations', {
        method: 'POST',
        body: {},
        key,
      });
      expect(created.status).toBe(200);
      ids.push(created.body.conversation_id);
      continue;
    }
    const started = await rest<{ id: string }>(url, '/api/v1/app-conversations', {
      method: 'POST',
      body: sandboxId === null ? {} : { sandbox_id: sandboxId },
      key,
    });
    expect(started.status).toBe(200);
    let task: { status: string; app_conversation_id: string | null; sandbox_id: string | null } | undefined;
    await expect
      .poll(
        async () => {
          const read = await rest<Array<typeof task>>(
            url,
            `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`,
            {
              key,
            },
          );
          task = read.body[0];
          return task?.status;
        },
        { timeout: 5_000, interval: 10 },
      )
      .toBe('READY');
    sandboxId ??= task?.sandbox_id ?? null;
    ids.push(task?.app_conversation_id as string);
  }
  return ids;
}
