/**
 * The graph operations the V1 live suites (test/live/v1-live.test.ts, v1-resume.test.ts) share, sent
 * over HTTP with one tenant's key: a query, a conversation's status, a message, and the cursors of its
 * stored events in the order the agent server stores them.
 */
import { expect } from 'vitest';
import type { TestGateway } from './gateway.ts';

/** The tenant the V1 live suites act as. */
export const V1_KEY = 'alice-key';

export type Json = Record<string, unknown>;
export type Answer = { data?: Json | null; errors?: Array<{ message: string; extensions?: Json }> };

/** One GraphQL POST as {@link V1_KEY}. */
export async function gql(gateway: TestGateway, query: string, variables: Json = {}): Promise<Answer> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': V1_KEY },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Answer;
}

/** The conversation's `status`, or undefined while it cannot be read. */
export async function statusOf(gateway: TestGateway, id: string): Promise<unknown> {
  const { data } = await gql(gateway, `query($id: ID!) { conversation(id: $id) { status } }`, { id });
  return (data?.conversation as Json | null)?.status;
}

/** Sends `content` with sendMessage and expects the payload. */
export async function send(gateway: TestGateway, id: string, content: string): Promise<void> {
  const { data, errors } = await gql(
    gateway,
    `mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }`,
    { input: { conversationId: id, content, imageUrls: [] } },
  );
  expect(errors).toBeUndefined();
  expect(data).toEqual({ sendMessage: { __typename: 'SendMessagePayload' } });
}

/** Every stored event's cursor, in the stored order (the history connection reads the events search). */
export async function storedCursors(gateway: TestGateway, id: string): Promise<string[]> {
  const { data, errors } = await gql(
    gateway,
    `query($id: ID!) { conversation(id: $id) { events(first: 100) { edges { cursor } } } }`,
    { id },
  );
  expect(errors).toBeUndefined();
  const edges = (((data?.conversation ?? {}) as Json).events as { edges: Array<{ cursor: string }> }).edges;
  return edges.map((edge) => edge.cursor);
}
