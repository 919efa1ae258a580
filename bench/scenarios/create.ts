/**
 * Scenario 3: `createConversation(input: {})` through the gateway vs `POST /api/conversations {}`.
 * Every create starts an agent in the local service on both sides alike.
 */
import { join } from 'node:path';
import { type BenchContext, graphqlTarget, restTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { ScenarioResult } from '../lib/report.ts';
import { serviceGit, waitForRepository } from '../lib/workspace-repository.ts';
import { createConversation } from './fanout.ts';

const CREATE_MUTATION = `mutation BenchCreate {
  createConversation(input: {}) {
    __typename
    ... on CreateConversationPayload { conversationId conversationStatus }
  }
}`;

/** Runs the create scenario, then waits until the service has made the repositories it asked for. */
export async function runCreate(context: BenchContext): Promise<ScenarioResult> {
  const result = await measureCreate(context);
  // Every conversation gets a git repository, made by one queue of the service in arrival order: the
  // repository of one more conversation comes after the ten thousand or so of this scenario, so
  // waiting for it keeps minutes of git work out of the scenarios measured next (history read 1.63x
  // its floor beside it, 1.39x without it, in two runs of 2026-11-28).
  const id = await createConversation(context);
  await waitForRepository(
    await serviceGit(context.dataDir),
    join(context.dataDir, 'workspaces', context.api, id),
  );
  return result;
}

function measureCreate(context: BenchContext): Promise<ScenarioResult> {
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
