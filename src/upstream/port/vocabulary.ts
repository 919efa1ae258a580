/**
 * The closed vocabularies the port speaks, whichever API answers: agent states (those an event
 * reports and those a caller may request), conversation statuses, runtime statuses and triggers. The
 * schema builds its enums from these (each with an UNKNOWN fallback for values a newer upstream adds),
 * and every adapter maps its wire onto them.
 *
 * They are OpenHands' own names, first sent by 0.53's server (V0), so they are re-exported from V0's
 * wire contract rather than written twice: V0's adapter passes its values through, V1's maps its
 * execution statuses and actions onto them (src/upstream/v1/events.ts, agent-actions.ts). Nothing
 * outside upstream/ imports a wire contract for them.
 *
 * Two exist on V1 only, and are V1's names as sent: sandbox statuses and the agent's execution statuses
 * (the schema's `sandboxStatus` and `executionStatus`, null on V0).
 *
 * A value outside its vocabulary (a newer upstream's) is read as {@link UNKNOWN_VALUE}, the internal
 * value of every schema enum's `UNKNOWN`; the string as sent is kept beside it (`statusRaw`, ...).
 */
import { GIT_PROVIDERS as COMMON_GIT_PROVIDERS } from '../../contract/common.ts';
import {
  CONVERSATION_STATUSES,
  RUNTIME_STATUSES,
  CONVERSATION_TRIGGERS as V0_TRIGGERS,
} from '../../contract/v0/records.ts';
import { V1_GIT_PROVIDERS, V1_TRIGGERS } from '../../contract/v1/app-server.ts';

export { SUGGESTED_TASK_TYPES } from '../../contract/common.ts';
export {
  AGENT_STATES,
  type AgentStateValue,
  CONVERSATION_STATUSES,
  REQUESTABLE_AGENT_STATES,
  type RequestableAgentStateValue,
  RUNTIME_STATUSES,
} from '../../contract/v0/records.ts';

import { SANDBOX_STATUSES } from '../../contract/v1/app-server.ts';
import { EXECUTION_STATUSES } from '../../contract/v1/events.ts';

export { EXECUTION_STATUSES, SANDBOX_STATUSES };

/** Both lists' values once each, the first list's order first. */
function union<A extends string, B extends string>(a: readonly A[], b: readonly B[]): ReadonlyArray<A | B> {
  return [...new Set<A | B>([...a, ...b])];
}

/** What started a conversation, on either API (V1 adds `bitbucket` and `automation` to 0.53's). */
export const CONVERSATION_TRIGGERS = union(V0_TRIGGERS, V1_TRIGGERS);

/** Git providers, on either API (V1 adds `azure_devops`). */
export const GIT_PROVIDERS = union(COMMON_GIT_PROVIDERS, V1_GIT_PROVIDERS);
export type GitProviderValue = (typeof GIT_PROVIDERS)[number];

/** Internal value of every `UNKNOWN` member (cannot collide with an upstream value). */
export const UNKNOWN_VALUE = '\u0000unknown';

/** A wire value read against its vocabulary: itself when known, else UNKNOWN_VALUE; null stays null. */
export function knownOrUnknown(known: ReadonlySet<string>, raw: string): string;
export function knownOrUnknown(known: ReadonlySet<string>, raw: string | null): string | null;
export function knownOrUnknown(known: ReadonlySet<string>, raw: string | null): string | null {
  if (raw === null) return null;
  return known.has(raw) ? raw : UNKNOWN_VALUE;
}

export const KNOWN_STATUSES: ReadonlySet<string> = new Set(CONVERSATION_STATUSES);
export const KNOWN_RUNTIME_STATUSES: ReadonlySet<string> = new Set(RUNTIME_STATUSES);
export const KNOWN_TRIGGERS: ReadonlySet<string> = new Set(CONVERSATION_TRIGGERS);
export const KNOWN_GIT_PROVIDERS: ReadonlySet<string> = new Set(GIT_PROVIDERS);

export const KNOWN_EXECUTION_STATUSES: ReadonlySet<string> = new Set(EXECUTION_STATUSES);
export const KNOWN_SANDBOX_STATUSES: ReadonlySet<string> = new Set(SANDBOX_STATUSES);

/** Who produces events (`source`), on either API. */
export const EVENT_SOURCES = ['agent', 'user', 'environment'] as const;
export const KNOWN_EVENT_SOURCES: ReadonlySet<string> = new Set(EVENT_SOURCES);
