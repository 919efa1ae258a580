/**
 * Errors of every origin reach the client as answers, never as HTTP 500 or a closed socket: variable
 * coercion errors are BAD_USER_INPUT request errors (HTTP 400 / 200 by Accept, graphql-ws `error` for
 * that operation only, a live subscription on the same socket untouched). Real gateway, real local
 * service, on both APIs (the refusals come before any upstream call; the live subscription that goes
 * on is V0's Socket.IO bridge or V1's agent-server socket). (graphql-jit's own errors, which carry no `extensions`, are fed through every observer in
 * test/gateway/observers.test.ts: since records are read defensively, no upstream answer can produce
 * one any more.)
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { APIS, seedConversations } from '../helpers/both-apis.ts';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { RawGraphqlWs } from '../helpers/graphql-ws.ts';
import { codes, metric, post } from '../helpers/http.ts';

const LIST = 'query V($f: Int) { conversations(first: $f) { edges { node { id } } } }';
const ONE = 'query One($id: ID!) { conversation(id: $id) { id } }';
const BY_TRIGGER =
  'query T($t: ConversationTrigger) { conversations(first: 1, trigger: $t) { edges { node { id } } } }';
const CREATE =
  'mutation C($input: CreateConversationInput!) { createConversation(input: $input) { __typename } }';

/** A JSON list nested `depth` deep, as text: too deep for JSON.stringify, so it is written by hand. */
function nestedJson(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/** A request body as text (the nested one cannot go through JSON.stringify). */
function body(query: string, variables: unknown): string {
  return JSON.stringify({ query, variables });
}

/** Each variable mistake the probe found answering 500, with the message the client now gets. */
const VARIABLE_MISTAKES: Array<{ name: string; body: string; message: string }> = [
  {
    name: 'wrong type',
    body: body(LIST, { f: 'abc' }),
    message: 'Variable "$f" got an invalid value: Expected type "Int", got a string.',
  },
  {
    name: 'missing required variable',
    body: body(ONE, {}),
    message: 'Variable "$id" of required type "ID!" was not provided.',
  },
  {
    name: 'invalid enum value',
    body: body(BY_TRIGGER, { t: 'GUU' }),
    message:
      'Variable "$t" got an invalid value: Expected a value of enum "ConversationTrigger", got a string. Did you mean the enum value "GUI"?',
  },
  {
    name: 'deeply nested JSON',
    // 100,000 levels: ~200 KB, inside the HTTP body and WebSocket message limits.
    body: `{"query":${JSON.stringify(LIST)},"variables":{"f":${nestedJson(100_000)}}}`,
    message: 'Variable "$f" got an invalid value: Expected type "Int", got a list.',
  },
  {
    name: 'input object with __proto__',
    body: `{"query":${JSON.stringify(CREATE)},"variables":{"input":{"__proto__":{"initialUserMsg":"x"}}}}`,
    message:
      'Variable "$input" got an invalid value: Field "__proto__" is not defined by type "CreateConversationInput".',
  },
];

describe.each(APIS)('variable coercion errors are request errors on %s', (api) => {
  it('over HTTP: 400 for graphql-response+json, 200 for json, BAD_USER_INPUT, no upstream call, logged and counted', async () => {
    const { gateway } = await serviceAndGatewayForTest({ api, hardening: { rateLimit: false } });
    for (const mistake of VARIABLE_MISTAKES) {
      const spec = await post(gateway.url, mistake.body);
      expect({ name: mistake.name, status: spec.status, json: spec.json }).toEqual({
        name: mistake.name,
        status: 400,
        json: {
          errors: [
            {
              message: mistake.message,
              locations: expect.any(Array),
              extensions: { code: 'BAD_USER_INPUT' },
            },
          ],
        },
      });
      const legacy = await post(gateway.url, mistake.body, { accept: 'application/json' });
      expect(legacy.status, mistake.name).toBe(200);
      expect(legacy.json).toEqual(spec.json);
    }
    expect(gateway.calls).toEqual([]);
    const logs = gateway.logs();
    expect(logs.filter((line) => line.includes('"errorCodes":["BAD_USER_INPUT"]'))).toHaveLength(
      2 * VARIABLE_MISTAKES.length,
    );
    expect(logs.join('\n')).not.toMatch(/observer failed|TypeError/);
    expect(await metric(gateway.url, 'graphql_errors_total', { code: 'BAD_USER_INPUT' })).toBe(
      2 * VARIABLE_MISTAKES.length,
    );
  });

  it('never echoes the value sent (it may be a secret in the wrong field)', async () => {
    const { gateway } = await serviceAndGatewayForTest({ api });
    const secret = 'ghp_secretTokenInTheWrongField0001';
    const answers = [
      await post(gateway.url, { query: BY_TRIGGER, variables: { t: secret } }),
      await post(gateway.url, { query: LIST, variables: { f: secret } }),
      await post(gateway.url, { query: CREATE, variables: { input: { gitProvider: secret } } }),
      await post(gateway.url, { query: CREATE, variables: { input: { [secret]: 1 } } }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(codes(answer)).toContain('BAD_USER_INPUT');
    }
    // An unknown field name is the client's own key, named so the client can fix it; values never are.
    expect(answers.slice(0, 3).map((answer) => answer.text.includes(secret))).toEqual([false, false, false]);
  });

  it('over graphql-ws: an `error` for that operation only; the socket and its live subscription go on', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({ api, hardening: { rateLimit: false } });
    const [id] = await seedConversations(api, service.url, 1);
    const socket = await RawGraphqlWs.open(gateway.url);
    onTestFinished(() => socket.close());
    socket.send(
      `{"id":"live","type":"subscribe","payload":${body(
        // The whole history, then live events (afterEventId: -1 is V0-only, docs/live-events.md).
        'subscription L($id: ID!) { conversationEvents(conversationId: $id, fromBeginning: true) { cursor ... on AgentMessageEvent { content } } }',
        { id },
      )}}`,
    );
    await socket.until((messages) => messages.some((m) => m.id === 'live' && m.type === 'next'));

    for (const [index, mistake] of VARIABLE_MISTAKES.entries()) {
      socket.send(`{"id":"bad${index}","type":"subscribe","payload":${mistake.body}}`);
      const answers = await socket.until((messages) => messages.some((m) => m.id === `bad${index}`));
      expect(
        answers.filter((m) => m.id === `bad${index}`),
        mistake.name,
      ).toEqual([
        {
          id: `bad${index}`,
          type: 'error',
          payload: [
            {
              message: mistake.message,
              locations: expect.any(Array),
              extensions: { code: 'BAD_USER_INPUT' },
            },
          ],
        },
      ]);
    }

    // The subscription on the same socket still delivers: the agent's answer to a new message arrives.
    const sent = await post(
      gateway.url,
      body('mutation S($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }', {
        input: { conversationId: id, content: 'still here?' },
      }),
    );
    expect(sent.json?.data).toEqual({ sendMessage: { __typename: 'SendMessagePayload' } });
    await socket.until((messages) =>
      messages.some(
        (m) =>
          m.id === 'live' &&
          (m.payload as ExecutionResult<{ conversationEvents: { content?: string } }>)?.data
            ?.conversationEvents.content === 'You said: still here?',
      ),
    );
    expect(socket.closeCode).toBeNull();
    expect(socket.messages.filter((m) => m.id === 'live' && m.type !== 'next')).toEqual([]);
  });
});
