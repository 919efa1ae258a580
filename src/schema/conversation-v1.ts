/**
 * The fields of `Conversation` that only the V1 API fills (execution and sandbox status, LLM model,
 * cost and token metrics, parent and sub-conversations). Each is nullable and null on V0, whose
 * records have none of them; the port carries them as optional fields (src/upstream/port/conversation.ts).
 *
 * Parent and sub-conversations are Conversation references, as a GraphQL client expects to walk a
 * graph: they resolve through the same loader as `conversation`/`nodes` (one batched read for every
 * reference in an operation). Their raw ids are exposed too, since they cost nothing and tell "no
 * parent" apart from "a parent that cannot be read now".
 */

import type { ConversationMetrics } from '../upstream/port/conversation.ts';
import { EXECUTION_STATUSES, SANDBOX_STATUSES } from '../upstream/port/vocabulary.ts';
import { builder } from './builder.ts';
import { ConversationRef } from './conversation.ts';
import { UNKNOWN_VALUE } from './enums.ts';

const V1_ONLY = 'V1 only; null on V0.';

type WireEnumValues = Record<string, { value: string; description: string }>;

function wireEnum(wireValues: readonly string[], describe: Record<string, string>): WireEnumValues {
  const values: WireEnumValues = {};
  for (const wire of wireValues) {
    values[wire.toUpperCase()] = {
      value: wire,
      description: describe[wire] ?? `Upstream value \`${wire}\`.`,
    };
  }
  values.UNKNOWN = {
    value: UNKNOWN_VALUE,
    description:
      'A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field.',
  };
  return values;
}

const ExecutionStatusEnum = builder.enumType('ExecutionStatus', {
  description: "What a V1 conversation's agent is doing (upstream `execution_status`).",
  values: wireEnum(EXECUTION_STATUSES, {
    idle: 'Waiting for a message (upstream `idle`).',
    running: 'Working (upstream `running`).',
    paused: 'Paused by a user (upstream `paused`).',
    waiting_for_confirmation:
      'Waiting for a user to confirm or reject an action (upstream `waiting_for_confirmation`).',
    finished: 'Done with the task (upstream `finished`).',
    error: 'Stopped on an error (upstream `error`).',
    stuck: 'Stopped because it was looping without progress (upstream `stuck`).',
    deleting: 'Being deleted (upstream `deleting`).',
  }),
});

const SandboxStatusEnum = builder.enumType('SandboxStatus', {
  description: "The state of a V1 conversation's sandbox (upstream `sandbox_status`).",
  values: wireEnum(SANDBOX_STATUSES, {
    STARTING: 'Being created or resumed (upstream `STARTING`).',
    RUNNING: 'Running: its agent server answers (upstream `RUNNING`).',
    PAUSED: 'Paused; resuming it restarts the agent server (upstream `PAUSED`).',
    ERROR: 'Failed (upstream `ERROR`).',
    MISSING: 'Gone (upstream `MISSING`).',
  }),
});

const ConversationMetricsType = builder.objectRef<ConversationMetrics>('ConversationMetrics').implement({
  description:
    "Cost and token usage of a V1 conversation's LLM calls so far (upstream `metrics` and its `accumulated_token_usage`). Each field is null when the upstream did not send it.",
  fields: (t) => ({
    accumulatedCost: t.exposeFloat('accumulatedCost', {
      nullable: true,
      description: "Cost so far, in the LLM provider's currency units (USD for the usual providers).",
    }),
    maxBudgetPerTask: t.exposeFloat('maxBudgetPerTask', {
      nullable: true,
      description: 'The budget per task, in the same units; null when none is set.',
    }),
    promptTokens: t.exposeFloat('promptTokens', {
      nullable: true,
      description: 'Prompt (input) tokens so far. A Float: long conversations can exceed 32-bit integers.',
    }),
    completionTokens: t.exposeFloat('completionTokens', {
      nullable: true,
      description: 'Completion (output) tokens so far.',
    }),
    cacheReadTokens: t.exposeFloat('cacheReadTokens', {
      nullable: true,
      description: 'Prompt tokens read from the provider cache.',
    }),
    cacheWriteTokens: t.exposeFloat('cacheWriteTokens', {
      nullable: true,
      description: 'Prompt tokens written to the provider cache.',
    }),
    reasoningTokens: t.exposeFloat('reasoningTokens', {
      nullable: true,
      description: 'Reasoning tokens (models that think before answering).',
    }),
    contextWindow: t.exposeFloat('contextWindow', {
      nullable: true,
      description: "The model's context window, in tokens.",
    }),
  }),
});

builder.objectFields(ConversationRef, (t) => ({
  // Every field but the two conversation references is a plain read of the port's Conversation (the
  // enum-like ones read against their vocabularies by the adapter); an absent V1 field (V0) reads as null.
  executionStatus: t.expose('executionStatus', {
    type: ExecutionStatusEnum,
    nullable: true,
    description: `${V1_ONLY} What its agent is doing; null also while its sandbox does not run (the upstream then knows nothing). UNKNOWN for values this gateway does not know (see \`executionStatusRaw\`).`,
  }),
  executionStatusRaw: t.exposeString('executionStatusRaw', {
    nullable: true,
    description: `${V1_ONLY} The upstream \`execution_status\` string as sent.`,
  }),
  sandboxStatus: t.expose('sandboxStatus', {
    type: SandboxStatusEnum,
    nullable: true,
    description: `${V1_ONLY} The state of its sandbox (which \`status\` is derived from on V1); UNKNOWN for values this gateway does not know (see \`sandboxStatusRaw\`).`,
  }),
  sandboxStatusRaw: t.exposeString('sandboxStatusRaw', {
    nullable: true,
    description: `${V1_ONLY} The upstream \`sandbox_status\` string as sent.`,
  }),
  llmModel: t.exposeString('llmModel', {
    nullable: true,
    description: `${V1_ONLY} The LLM its agent uses, as the upstream names it (e.g. \`anthropic/claude-sonnet-4-5\`).`,
  }),
  metrics: t.expose('metrics', {
    type: ConversationMetricsType,
    nullable: true,
    description: `${V1_ONLY} Cost and token usage so far; null also when the upstream sent none.`,
  }),
  parentConversationId: t.exposeString('parentConversationId', {
    nullable: true,
    description: `${V1_ONLY} The raw id of the conversation this one was started from; null for a top-level one.`,
  }),
  parentConversation: t.field({
    type: ConversationRef,
    nullable: true,
    description: `${V1_ONLY} The conversation this one was started from (read like \`conversation(id:)\`, batched with every other reference of the operation); null for a top-level one, or when the parent cannot be read (see \`parentConversationId\`).`,
    resolve: (c, _args, context) =>
      c.parentConversationId ? context.conversationLoader.load(c.parentConversationId) : null,
  }),
  subConversationIds: t.exposeStringList('subConversationIds', {
    nullable: true,
    description: `${V1_ONLY} The raw ids of the conversations started from this one, in the upstream's order.`,
  }),
  subConversations: t.field({
    type: [ConversationRef],
    nullable: true,
    description: `${V1_ONLY} The conversations started from this one, in the upstream's order, read in one batch; one that cannot be read (deleted since) is left out (see \`subConversationIds\`).`,
    resolve: async (c, _args, context) => {
      if (!c.subConversationIds) return null;
      // Loads in the same tick share one batch; a failed one is left out, not the whole list.
      const loaded = await Promise.all(
        c.subConversationIds.map((id) => context.conversationLoader.load(id).catch(() => null)),
      );
      return loaded.filter((sub) => sub !== null);
    },
  }),
}));
