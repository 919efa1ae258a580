import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type {
  AppConversationRecord,
  AppConversationStartTaskRecord,
  PageRecord,
} from '../../src/contract/v1/app-server.ts';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import {
  LOCAL_SERVICE_MAIN,
  localServiceForTest,
  rest,
  spawnLocalServiceCli,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { killMidBurst } from '../helpers/processes.ts';
import { agentRest, startConversation, userMessage } from './v1-harness.ts';

// The V1 face of the CLI, started as a real process: it prints both kinds of address, and `kill -9`
// in the middle of a burst of starts and messages loses nothing it acknowledged.

describe('choosing the V1 face', () => {
  it('the CLI refuses an unknown --api; the gateway reads --local-service-api (env LOCAL_SERVICE_API), v0 by default', () => {
    const bad = spawnSync(process.execPath, ['--import', 'tsx', LOCAL_SERVICE_MAIN, '--api', 'v2'], {
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('local-service: invalid api "v2": expected v0 or v1');
    expect(loadConfig([], {}).localServiceApi).toBe('v0');
    expect(loadConfig([], { LOCAL_SERVICE_API: 'v1' }).localServiceApi).toBe('v1');
    expect(loadConfig(['--local-service-api', 'v0'], { LOCAL_SERVICE_API: 'v1' }).localServiceApi).toBe('v0');
    expect(() => loadConfig(['--local-service-api', 'v9'], {})).toThrow(ConfigError);
  });
});

describe('V1 CLI', () => {
  it('prints the app server and where the agent servers listen', async () => {
    const { output } = await spawnLocalServiceCli(tempDataDirForTest(), ['--api', 'v1']);
    await expect.poll(output).toMatch(/V1 agent servers: one per running sandbox/);
    expect(output()).toMatch(/V1 app server: http:\/\/127\.0\.0\.1:\d+\/api\/v1/);
  });

  it('kill -9 during a burst of starts and messages loses nothing acknowledged', async () => {
    const dataDir = tempDataDirForTest();
    const { child, url } = await spawnLocalServiceCli(dataDir, ['--api', 'v1']);
    const conversations: AppConversationRecord[] = [];
    for (let i = 0; i < 3; i++) conversations.push((await startConversation(url)).conversation);

    const startedTasks: Array<{ task: string; conversation: string }> = [];
    const sentMessages: Array<{ conversation: string; text: string }> = [];
    let turn = 0;
    const failuresBeforeKill = await killMidBurst(
      child,
      async () => {
        const n = turn++;
        if (n % 2 === 0) {
          const id = randomUUID().replaceAll('-', '');
          const res = await rest<AppConversationStartTaskRecord>(url, '/api/v1/app-conversations', {
            method: 'POST',
            // Into the first sandbox: new sandboxes beyond five would pause the ones being messaged.
            body: {
              conversation_id: id,
              sandbox_id: conversations[0]?.sandbox_id,
              initial_message: { content: [{ type: 'text', text: `start ${n}` }] },
            },
          });
          if (res.status === 200) startedTasks.push({ task: res.body.id, conversation: id });
          return res.status === 200;
        }
        const conversation = conversations[n % conversations.length];
        if (!conversation) return 'done';
        const text = `message ${n}`;
        const res = await agentRest(conversation, '/events', {
          method: 'POST',
          body: userMessage(text, true),
        });
        if (res.status === 200) sentMessages.push({ conversation: conversation.id, text });
        return res.status === 200;
      },
      () => startedTasks.length + sentMessages.length >= 60,
      { timeout: 20_000, interval: 5 },
    );
    expect(failuresBeforeKill).toBe(0);

    const restarted = await localServiceForTest({ api: 'v1', dataDir });
    for (const { task, conversation } of startedTasks) {
      const got = await rest<Array<AppConversationStartTaskRecord | null>>(
        restarted.url,
        `/api/v1/app-conversations/start-tasks?ids=${task}`,
      );
      const found = got.body[0];
      expect(found, task).not.toBeNull();
      // Finished before the kill, or ended by the restart's recovery: never left half-way.
      expect(['READY', 'ERROR'], task).toContain(found?.status);
      if (found?.status === 'READY') {
        const listed = await rest<unknown[]>(restarted.url, `/api/v1/app-conversations?ids=${conversation}`);
        expect(listed.body[0], conversation).not.toBeNull();
      } else {
        expect(found?.detail).toBe('The service restarted before the start finished');
      }
    }
    for (const conversation of conversations) {
      const events = await rest<PageRecord<SdkEventRecord>>(
        restarted.url,
        `/api/v1/conversation/${conversation.id}/events/search?kind__eq=MessageEvent&limit=100`,
      );
      const texts = new Set(
        events.body.items.flatMap((e) =>
          e.kind === 'MessageEvent'
            ? e.llm_message.content.map((c) => (c.type === 'text' ? c.text : ''))
            : [],
        ),
      );
      const acknowledged = sentMessages.filter((m) => m.conversation === conversation.id).map((m) => m.text);
      expect(acknowledged.filter((text) => !texts.has(text))).toEqual([]);
    }
    // Sandboxes are paused by the restart; resuming brings an agent server back with the history.
    const sandbox = conversations[0]?.sandbox_id as string;
    expect(
      (await rest(restarted.url, `/api/v1/sandboxes/${sandbox}/resume`, { method: 'POST' })).status,
    ).toBe(200);
  }, 60_000);
});
