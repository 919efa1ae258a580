/**
 * Scenario 3: `createConversation(input: {})` through the gateway vs `POST /api/conversations {}`.
 * Every create starts an agent in the local service on both sides alike.
 */
import { type BenchContext, graphqlTarget, restTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { ScenarioResult } from '../lib/report.ts';

const CREATE_MUTATION = `mutation BenchCreate {
  createConversation(input: {}) {
    __typename
    ... on CreateConversationPayload { conversationId conversationStatus }
  }
}`;

/** Runs the create scenario. */
export function runCreate(context: BenchContext): Promise<ScenarioResult> {
  const targets = {
    gateway: {
      ...graphqlTarget(context, CREATE_MUTATION, {}, (data) => {
        const created = data.createConversation as { __typename: string; conversationId?: string };
        if (created.__typename !== 'CreateConversationPayload' || !created.conversationId) {
          throw new Error(`create answered ${JSON.stringify(created)}`);
        }
      }),
      // Domain failures arrive as error members of the result union, without an `errors` key.
      isOk: (status: number, body: string) =>
        status === 200 && body.includes('"__typename":"CreateConversationPayload"'),
    },
    direct: restTarget(context, 'POST', '/api/conversations', {}, (body) => {
      if ((body as { status?: string }).status !== 'ok')
        throw new Error(`create answered ${JSON.stringify(body)}`);
    }),
  };
  return compareGatewayWithDirect(context, 'create', targets);
}
