/**
 * GRAPHQL_FIELD_SUGGESTIONS=false: no "Did you mean ...?" in any message, whatever wording graphql-js
 * uses (fields, arguments, types, enum values, input fields, inline fragments) and whether it comes
 * from validation or from variable coercion, over HTTP and graphql-ws. With suggestions on, the same
 * requests do suggest (so the test can tell the switch apart from requests that never suggest).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { gatewayForTest } from '../helpers/gateway.ts';
import { RawGraphqlWs } from '../helpers/graphql-ws.ts';
import { post } from '../helpers/http.ts';
import { localServiceForTest } from '../helpers/local-service.ts';

/** Requests graphql-js answers with a suggestion, one per wording and origin. */
const SUGGESTING: Array<{ name: string; query: string; variables?: Record<string, unknown> }> = [
  { name: 'field', query: '{ conversations(first: 1) { edges { node { titel } } } }' },
  { name: 'argument', query: '{ conversations(frist: 1) { edges { cursor } } }' },
  { name: 'enum literal', query: '{ conversations(first: 1, trigger: GUU) { edges { cursor } } }' },
  {
    name: 'type of a variable',
    query: 'query Q($t: ConversationTriger) { conversations(first: 1, trigger: $t) { edges { cursor } } }',
  },
  { name: 'inline fragment', query: '{ node(id: "x") { title } }' },
  {
    name: 'enum variable',
    query: 'query Q($t: ConversationTrigger) { conversations(first: 1, trigger: $t) { edges { cursor } } }',
    variables: { t: 'GUU' },
  },
  {
    name: 'input field of a variable',
    query:
      'mutation M($input: CreateConversationInput!) { createConversation(input: $input) { __typename } }',
    variables: { input: { initialUserMesage: 'hi' } },
  },
];

async function gatewayWith(fieldSuggestions: boolean) {
  const service = await localServiceForTest();
  return gatewayForTest({ upstreamUrl: service.url, hardening: { fieldSuggestions, rateLimit: false } });
}

/** Every error message of each request, over HTTP and over one graphql-ws socket. */
async function messages(url: string): Promise<Record<string, { http: string[]; ws: string[] }>> {
  const socket = await RawGraphqlWs.open(url);
  onTestFinished(() => socket.close());
  const found: Record<string, { http: string[]; ws: string[] }> = {};
  for (const [index, request] of SUGGESTING.entries()) {
    const answer = await post(url, { query: request.query, variables: request.variables ?? {} });
    socket.send(JSON.stringify({ id: String(index), type: 'subscribe', payload: request }));
    const frames = await socket.until((all) =>
      all.some((m) => m.id === String(index) && (m.type === 'error' || m.type === 'complete')),
    );
    const frame = frames.find((m) => m.id === String(index));
    const wsErrors = (
      frame?.type === 'error' ? frame.payload : (frame?.payload as { errors?: unknown })?.errors
    ) as Array<{ message: string }> | undefined;
    found[request.name] = {
      http: (answer.json?.errors ?? []).map((error) => error.message),
      ws: (wsErrors ?? []).map((error) => error.message),
    };
  }
  expect(socket.closeCode).toBeNull();
  return found;
}

describe('field suggestions', () => {
  it('switched off: no message of any wording or origin suggests anything', async () => {
    const gateway = await gatewayWith(false);
    const found = await messages(gateway.url);
    for (const [name, { http, ws }] of Object.entries(found)) {
      expect(http.length, `${name} answered an error over HTTP`).toBeGreaterThan(0);
      expect(ws.length, `${name} answered an error over graphql-ws`).toBeGreaterThan(0);
      for (const message of [...http, ...ws]) expect(message, name).not.toMatch(/Did you mean/);
    }
    // What is left still says what is wrong.
    expect(found['enum literal']?.http).toEqual([
      'Value "GUU" does not exist in "ConversationTrigger" enum.',
    ]);
    expect(found['enum variable']?.ws).toEqual([
      'Variable "$t" got an invalid value: Expected a value of enum "ConversationTrigger", got a string.',
    ]);
  });

  it('switched on (the default): the same requests do suggest', async () => {
    const gateway = await gatewayWith(true);
    const found = await messages(gateway.url);
    for (const [name, { http, ws }] of Object.entries(found)) {
      expect(http.join(' '), `${name} over HTTP`).toMatch(/Did you mean/);
      expect(ws.join(' '), `${name} over graphql-ws`).toMatch(/Did you mean/);
    }
  });
});
