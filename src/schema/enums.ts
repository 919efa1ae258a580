import { badUserInput } from '../errors.ts';
import {
  CONVERSATION_STATUSES,
  CONVERSATION_TRIGGERS,
  GIT_PROVIDERS,
  RUNTIME_STATUSES,
  SUGGESTED_TASK_TYPES,
  UNKNOWN_VALUE,
} from '../upstream/port/vocabulary.ts';
import { builder } from './builder.ts';

// The port reads a conversation's and an event's wire values against the vocabularies
// (src/upstream/port/vocabulary.ts); resolvers that still read one (a status update's runtime status,
// a create payload's status) use the same rule.
export {
  KNOWN_RUNTIME_STATUSES,
  KNOWN_STATUSES,
  knownOrUnknown,
  UNKNOWN_VALUE,
} from '../upstream/port/vocabulary.ts';

type EnumValues = Record<string, { value: string; description: string }>;

function enumValues(
  wireValues: readonly string[],
  graphqlName: (wire: string) => string,
  describe: (wire: string) => string,
): EnumValues {
  const values: EnumValues = {};
  for (const wire of wireValues) values[graphqlName(wire)] = { value: wire, description: describe(wire) };
  values.UNKNOWN = {
    value: UNKNOWN_VALUE,
    description:
      'A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field.',
  };
  return values;
}

const wireNamed = (wire: string) => `Upstream value \`${wire}\`.`;

/**
 * Refuses `UNKNOWN` where an enum is input.
 * @throws GraphQLError BAD_USER_INPUT
 */
export function requireKnownInput<T extends string | null | undefined>(value: T, argument: string): T {
  if (value === UNKNOWN_VALUE) {
    throw badUserInput(`${argument}: UNKNOWN is only an output value.`);
  }
  return value;
}

export const ConversationStatusEnum = builder.enumType('ConversationStatus', {
  description: 'Lifecycle of a conversation (upstream `status`).',
  values: enumValues(CONVERSATION_STATUSES, (wire) => wire, wireNamed),
});

/** `STATUS$READY` -> `READY`; `CHAT_INTERFACE$AGENT_RATE_LIMITED_STOPPED_MESSAGE` -> `AGENT_RATE_LIMITED_STOPPED`. */
function runtimeStatusName(wire: string): string {
  const name = wire.slice(wire.indexOf('$') + 1);
  return name.endsWith('_STOPPED_MESSAGE') ? name.slice(0, -'_MESSAGE'.length) : name;
}

export const RuntimeStatusEnum = builder.enumType('RuntimeStatus', {
  description: "State of the conversation's runtime (upstream `runtime_status`); null when no agent runs.",
  values: enumValues(RUNTIME_STATUSES, runtimeStatusName, wireNamed),
});

export const ConversationTriggerEnum = builder.enumType('ConversationTrigger', {
  description: 'What started a conversation (upstream `trigger`).',
  values: enumValues(CONVERSATION_TRIGGERS, (wire) => wire.toUpperCase(), wireNamed),
});

export const GitProviderEnum = builder.enumType('GitProvider', {
  description: 'Git hosting provider (upstream `git_provider`).',
  values: enumValues(GIT_PROVIDERS, (wire) => wire.toUpperCase(), wireNamed),
});

export const SuggestedTaskTypeEnum = builder.enumType('SuggestedTaskType', {
  description: 'Kind of a suggested task (input only).',
  values: Object.fromEntries(
    SUGGESTED_TASK_TYPES.map((wire) => [wire, { value: wire, description: wireNamed(wire) }]),
  ),
});
