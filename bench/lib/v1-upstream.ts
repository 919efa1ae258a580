/**
 * The V1 local service as the bench drives it (docs/upstream-facts.md, "V1: topology"): conversations
 * started on the app server (a start task followed until READY), and where a conversation's agent
 * server is (its `conversation_url` and the sandbox's `session_api_key`, from the app server's batch get).
 */

/** A V1 conversation's agent server: its REST base and the key it wants as `X-Session-API-Key`. */
export interface V1Agent {
  /** `<agent server>/api/conversations/<hex id>`. */
  conversationUrl: string;
  sessionApiKey: string;
}

interface StartTask {
  id: string;
  status: string;
  detail: string | null;
  app_conversation_id: string | null;
  sandbox_id: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function getJson<T>(url: string, key: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(url, {
    ...init,
    headers: { 'x-session-api-key': key, ...(init.body ? { 'content-type': 'application/json' } : {}) },
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/**
 * Starts `count` conversations at once (their start tasks run concurrently, ~1 s each) in `sandboxId`,
 * or, when it is null, the first in a new sandbox and the rest in that one: one agent server for all,
 * so the app server's cap on running sandboxes pauses none of them. Answers the conversation ids in
 * start order and the sandbox.
 */
export async function startV1Conversations(
  serviceUrl: string,
  key: string,
  count: number,
  sandboxId: string | null = null,
): Promise<{ ids: string[]; sandboxId: string }> {
  const start = async (sandbox: string | null): Promise<StartTask> =>
    getJson<StartTask>(`${serviceUrl}/api/v1/app-conversations`, key, {
      method: 'POST',
      body: JSON.stringify(sandbox === null ? {} : { sandbox_id: sandbox }),
    });
  const ready = async (tasks: StartTask[]): Promise<StartTask[]> => {
    for (const until = performance.now() + 60_000; performance.now() < until; ) {
      await sleep(100);
      const query = new URLSearchParams(tasks.map((task) => ['ids', task.id]));
      const read = await getJson<StartTask[]>(
        `${serviceUrl}/api/v1/app-conversations/start-tasks?${query}`,
        key,
      );
      const failed = read.find((task) => task?.status === 'ERROR');
      if (failed) throw new Error(`V1 start failed: ${failed.detail}`);
      if (read.every((task) => task?.status === 'READY')) return read;
    }
    throw new Error('V1 starts not READY within 60 s');
  };
  const ids: string[] = [];
  let sandbox = sandboxId;
  if (sandbox === null && count > 0) {
    const [first] = await ready([await start(null)]);
    sandbox = first?.sandbox_id ?? null;
    ids.push(first?.app_conversation_id as string);
  }
  if (sandbox === null) throw new Error('V1 seeding: no sandbox');
  // 50 start tasks at a time: the batch read of the tasks stays below the app server's 100 ids.
  for (let i = ids.length; i < count; i += 50) {
    const batch = Math.min(50, count - i);
    const tasks: StartTask[] = [];
    // Started one after the other, so their created_at (the list's order) is their start order.
    for (let j = 0; j < batch; j++) tasks.push(await start(sandbox));
    ids.push(...(await ready(tasks)).map((task) => task.app_conversation_id as string));
  }
  return { ids, sandboxId: sandbox };
}

/** The agent server of a running V1 conversation (from `GET /api/v1/app-conversations?ids=`). */
export async function v1AgentOf(serviceUrl: string, key: string, id: string): Promise<V1Agent> {
  const [record] = await getJson<
    Array<{ conversation_url: string | null; session_api_key: string | null } | null>
  >(`${serviceUrl}/api/v1/app-conversations?ids=${id}`, key);
  if (!record?.conversation_url || !record.session_api_key)
    throw new Error(`V1 conversation ${id} has no running agent server: ${JSON.stringify(record)}`);
  return { conversationUrl: record.conversation_url, sessionApiKey: record.session_api_key };
}

/** The agent server's event WebSocket of a conversation: `ws://<agent server>/sockets/events/<id>`. */
export function v1EventSocketUrl(agent: V1Agent): string {
  const url = new URL(agent.conversationUrl);
  url.protocol = 'ws:';
  url.pathname = url.pathname.replace(/\/api\/conversations\/([^/]+)\/?$/, '/sockets/events/$1');
  return url.toString();
}

/** A user message as the agent server's `POST .../events` and its socket take it. */
export function v1Message(text: string, run: boolean): string {
  return JSON.stringify({ role: 'user', content: [{ type: 'text', text }], run });
}
