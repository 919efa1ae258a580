/**
 * The per-operation budget, decided once the variables are known and before anything runs:
 *
 * - page arguments (`first`/`last`) outside 1..MAX_PAGE_SIZE and `nodes(ids:)` with more than
 *   MAX_PAGE_SIZE ids are BAD_USER_INPUT, whether written as literals or passed as variables;
 * - the cost (every selected field counts 1; everything selected under a field with `first`/`last` or
 *   an `ids` list counts once per item) must stay within `maxCost`;
 * - an upper bound of the upstream calls the operation can make (connection fields: the page walker's
 *   call bound each; `node`/`conversation`: one; `nodes`: one per id; mutations and subscriptions: one
 *   per root field plus the reads they select) must stay within `maxUpstreamCalls`.
 *
 * Why not graphql-armor's cost rule: it runs at validation, before variables exist, so it multiplied
 * by `first` only when `first` was a literal: `first: 100` as a variable passed while the same literal
 * was refused, and a 3,000-id `nodes(ids: $ids)` cost as little as one id.
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLNamedType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { badUserInput, codedError } from '../../errors.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../schema/connection.ts';
import type { GatewayContext } from '../../schema/context.ts';
import { DEFAULT_PAGING } from '../../upstream/page-walker.ts';
import { QUERY_LIMIT_CODE } from './limits.ts';
import type { OperationGuard } from './operation-guard.ts';

/** Limits of one operation. */
export interface OperationBudget {
  /** Largest cost (see the module comment). `GRAPHQL_MAX_COST`. @default 6000 */
  maxCost: number;
  /** Largest upper bound of upstream calls. `GRAPHQL_MAX_UPSTREAM_CALLS`. @default 150 */
  maxUpstreamCalls: number;
}

/** What an operation may cost, computed from its document and variables. */
export interface OperationEstimate {
  cost: number;
  /** Upper bound of the upstream HTTP calls (logical calls; retries not counted). */
  upstreamCalls: number;
}

/** Root fields and payload fields whose resolution reaches the upstream, and how often at most. */
type CallsOf = (args: Record<string, unknown>, callsPerConnection: number) => number;
const UPSTREAM_CALLS: Record<string, CallsOf> = {
  'Query.conversations': (_args, callsPerConnection) => callsPerConnection,
  'Query.conversation': () => 1,
  'Query.node': () => 1,
  'Query.nodes': (args) => (Array.isArray(args.ids) ? args.ids.length : 0),
  // The events page walker's bound, plus one read of the cursor's own event for an exact pageInfo.
  'Conversation.events': (_args, callsPerConnection) => callsPerConnection + 1,
  // The conversation after a create, rename, start or stop: one read each.
  'CreateConversationPayload.conversation': () => 1,
  'RenameConversationPayload.conversation': () => 1,
  'StartConversationPayload.conversation': () => 1,
  'StopConversationPayload.conversation': () => 1,
  // The workspace (schema/workspace.ts): the conversation's record (where its sandbox is, whether it
  // runs), then the route; V1's changes and diffs may also try the app server's proxy first, V1's
  // folder and file reads resolve the path through the sandbox shell first.
  'Workspace.changes': () => 3,
  'Workspace.diff': () => 3,
  'Workspace.directory': () => 3,
  'Workspace.file': () => 3,
  'Workspace.commits': () => 2,
  'Workspace.commitChanges': () => 2,
  'WorkspaceCommit.changes': () => 1,
  'Workspace.sandboxLinks': () => 2,
  // The record, then one write per file on V1 (V0 takes them in one request).
  'Mutation.uploadWorkspaceFiles': (args) => {
    const input = args.input as { files?: unknown } | undefined;
    return 1 + (Array.isArray(input?.files) ? input.files.length : 1);
  },
};

const NO_ARGS: Record<string, unknown> = Object.freeze({});

function badInput(message: string): GraphQLError {
  return badUserInput(message, true);
}

function overLimit(message: string, limit: 'COST' | 'UPSTREAM_CALLS'): GraphQLError {
  return codedError(QUERY_LIMIT_CODE, { message, extensions: { limit }, refuses: true });
}

/** Items a field returns per its arguments, checking their bounds; 1 when it takes no such argument. */
function itemsOf(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): number {
  let items = 1;
  let pageGiven = false;
  for (const name of ['first', 'last'] as const) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PAGE_SIZE) {
      throw badInput(`${name} must be between 1 and ${MAX_PAGE_SIZE}.`);
    }
    pageGiven = true;
    items = Math.max(items, value);
  }
  // A connection without `first` answers a default page.
  if (!pageGiven && field.args.some((arg) => arg.name === 'first')) items = DEFAULT_PAGE_SIZE;
  if (Array.isArray(args.ids)) {
    if (args.ids.length > MAX_PAGE_SIZE) {
      throw badInput(`ids takes at most ${MAX_PAGE_SIZE} ids (got ${args.ids.length}).`);
    }
    items = Math.max(items, args.ids.length);
  }
  return items;
}

/**
 * Cost and upstream-call bound of one operation with coerced variables.
 * @throws GraphQLError BAD_USER_INPUT for page sizes or id lists beyond MAX_PAGE_SIZE
 */
export function estimateOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  callsPerConnection: number,
): OperationEstimate {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const included = (node: Parameters<typeof getDirectiveValues>[1]) =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;

  // Cost and calls of a selection set per one item of its parent. Linear in the multiplier, so a
  // fragment spread many times is measured once (no exponential walk through nested spreads).
  const fragmentMemo = new Map<string, OperationEstimate>();
  const measure = (selectionSet: SelectionSetNode, parent: GraphQLNamedType): OperationEstimate => {
    const total: OperationEstimate = { cost: 0, upstreamCalls: 0 };
    for (const selection of selectionSet.selections) {
      if (selection.directives?.length && !included(selection)) continue;
      let inner: OperationEstimate;
      if (selection.kind === Kind.FIELD) {
        total.cost += 1;
        if (selection.name.value === '__typename') continue;
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const field = parent.getFields()[selection.name.value];
        if (!field) continue; // validation refuses unknown fields before execution
        const args = field.args.length > 0 ? getArgumentValues(field, selection, variables) : NO_ARGS;
        const items = itemsOf(field, args);
        total.upstreamCalls +=
          UPSTREAM_CALLS[`${parent.name}.${field.name}`]?.(args, callsPerConnection) ?? 0;
        if (!selection.selectionSet) continue;
        const child = measure(selection.selectionSet, getNamedType(field.type));
        total.cost += items * child.cost;
        total.upstreamCalls += items * child.upstreamCalls;
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        inner = measure(selection.selectionSet, type ?? parent);
      } else {
        const name = selection.name.value;
        const memo = fragmentMemo.get(name);
        const fragment = fragments.get(name);
        if (memo) inner = memo;
        else if (!fragment) continue;
        else {
          // Validation refuses cyclic spreads; this placeholder only keeps a bad document finite.
          fragmentMemo.set(name, { cost: 0, upstreamCalls: 0 });
          const type = schema.getType(fragment.typeCondition.name.value) ?? parent;
          inner = measure(fragment.selectionSet, type);
          fragmentMemo.set(name, inner);
        }
      }
      total.cost += inner.cost;
      total.upstreamCalls += inner.upstreamCalls;
    }
    return total;
  };

  const root = schema.getRootType(operation.operation);
  if (!root) return { cost: 0, upstreamCalls: 0 };
  const estimate = measure(operation.selectionSet, root);
  // Every mutation and subscription root field talks to the upstream (REST or its socket) once.
  if (operation.operation !== 'query') {
    for (const selection of operation.selectionSet.selections) {
      if (selection.kind === Kind.FIELD && selection.name.value !== '__typename') estimate.upstreamCalls += 1;
    }
  }
  return estimate;
}

/**
 * The refusal for an operation, or null when it may run. Variables that fail coercion are left to
 * the executor, which reports them as usual.
 */
function checkOperation(
  args: {
    schema: GraphQLSchema;
    document: DocumentNode;
    operationName?: string | null | undefined;
    variableValues?: Readonly<Record<string, unknown>> | null | undefined;
    contextValue?: unknown;
  },
  budget: OperationBudget,
): GraphQLError | null {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return null;
  const coerced = getVariableValues(
    args.schema,
    operation.variableDefinitions ?? [],
    (args.variableValues ?? {}) as Record<string, unknown>,
    { maxErrors: 1 },
  );
  if (coerced.errors) return null;
  const paging = (args.contextValue as Partial<GatewayContext> | undefined)?.paging ?? DEFAULT_PAGING;
  let estimate: OperationEstimate;
  try {
    estimate = estimateOperation(
      args.schema,
      args.document,
      operation,
      coerced.coerced,
      paging.maxUpstreamCalls,
    );
  } catch (error) {
    // Ours (page size, ids); anything else (a malformed argument) is the executor's to report.
    if (error instanceof GraphQLError && error.extensions.code === 'BAD_USER_INPUT') return error;
    return null;
  }
  if (estimate.cost > budget.maxCost) {
    return overLimit(
      `Query is too expensive: its cost is ${estimate.cost}, the limit is ${budget.maxCost} (each field counts 1, times the page size or number of ids it is selected under).`,
      'COST',
    );
  }
  if (estimate.upstreamCalls > budget.maxUpstreamCalls) {
    return overLimit(
      `Query could make ${estimate.upstreamCalls} calls to the conversation service; the limit is ${budget.maxUpstreamCalls} per operation.`,
      'UPSTREAM_CALLS',
    );
  }
  return null;
}

/**
 * Refuses over-budget operations before execution, over HTTP and graphql-ws alike (queries and
 * mutations at execute, subscriptions at subscribe). Nothing of a refused operation reaches the upstream.
 */
export function operationBudgetGuard(budget: OperationBudget): OperationGuard {
  // Operations found within budget, per parsed document (Yoga reuses the parsed document of a repeated
  // query) and small variables: a client repeating the same list skips the walk (~10 us each).
  const allowed = new WeakMap<DocumentNode, Set<string>>();
  const check = (args: Parameters<typeof checkOperation>[0]): GraphQLError | null => {
    const variables = JSON.stringify(args.variableValues ?? null);
    const key =
      variables.length <= MAX_CACHED_VARIABLES_LENGTH ? `${args.operationName ?? ''}\n${variables}` : null;
    const known = allowed.get(args.document);
    if (key !== null && known?.has(key)) return null;
    const refusal = checkOperation(args, budget);
    if (refusal === null && key !== null) {
      const set = known ?? new Set<string>();
      if (set.size >= MAX_CACHED_PER_DOCUMENT) set.clear();
      set.add(key);
      if (!known) allowed.set(args.document, set);
    }
    return refusal;
  };
  return {
    refusesSubscriptions: true,
    refuse(args) {
      const refusal = check(args);
      return refusal ? { errors: [refusal] } : null;
    },
  };
}

/** Variables longer than this (as JSON) are not remembered: id lists vary per request anyway. */
const MAX_CACHED_VARIABLES_LENGTH = 256;
/** Variable sets remembered per document before the set starts over. */
const MAX_CACHED_PER_DOCUMENT = 64;
