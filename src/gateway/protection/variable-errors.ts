/**
 * Variable coercion as a request error, the same for every transport and executor. graphql-js and
 * graphql-jit each coerce variables inside `execute`, and report failures differently (jit builds
 * GraphQLErrors without `extensions`, which crashed the observers and answered HTTP 500). The gateway
 * coerces first, itself, before anything executes: a wrong type, a missing required variable, an
 * unknown enum value or input field (`__proto__` included), or a value nested past what the stack can
 * walk becomes `BAD_USER_INPUT`, which the GraphQL-over-HTTP spec makes a request error (HTTP 400 for
 * `application/graphql-response+json`, 200 for `application/json`) and graphql-ws an `error` message
 * for that one operation.
 *
 * Messages name the variable, the path inside it and the expected type, never the value sent: a value
 * in the wrong place may be a secret (a token pasted into an enum field), and answers never echo one.
 */

import {
  coerceInputValue,
  type ExecutionArgs,
  type GraphQLError,
  type GraphQLInputType,
  getOperationAST,
  isEnumType,
  isInputObjectType,
  isInputType,
  isLeafType,
  isListType,
  isNonNullType,
  print,
  typeFromAST,
} from 'graphql';
import { codedError, type ErrorCode } from '../../errors.ts';
import type { OperationGuard } from './operation-guard.ts';
import { withoutSuggestions } from './suggestions.ts';

/** The code of every variable coercion error. */
const VARIABLE_ERROR_CODE = 'BAD_USER_INPUT' satisfies ErrorCode;

/** Errors reported per operation; a list of 3,000 wrong items must not become 3,000 errors. */
export const MAX_VARIABLE_ERRORS = 20;

/** Options of {@link variableErrors}. */
export interface VariableErrorOptions {
  /** Leave "Did you mean ...?" out (GRAPHQL_FIELD_SUGGESTIONS=false). @default false */
  hideSuggestions?: boolean;
  /** Extra `extensions` of each error (the HTTP status for Yoga). */
  extensions?: Record<string, unknown>;
}

/** The JSON kind of a value, said instead of the value itself. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return 'an unsupported value';
}

/** The input type found at `path` (field names and list indexes) inside `type`. */
function typeAt(type: GraphQLInputType, path: ReadonlyArray<string | number>): GraphQLInputType | null {
  let current: GraphQLInputType = type;
  for (const segment of path) {
    if (isNonNullType(current)) current = current.ofType;
    if (isListType(current) && typeof segment === 'number') current = current.ofType;
    else if (isInputObjectType(current) && typeof segment === 'string') {
      const field = Object.hasOwn(current.getFields(), segment) ? current.getFields()[segment] : undefined;
      if (!field) return null;
      current = field.type;
    } else return null;
  }
  return current;
}

/** " Did you mean ...?" of a graphql-js message (names of the schema only, never the input). */
function suggestionOf(message: string): string {
  return / Did you mean [^?]*\?$/.exec(message)?.[0] ?? '';
}

/**
 * What went wrong at one place of a variable, without the value. Leaf types (scalars, enums) throw
 * messages that embed the value; they are replaced by the expected type and the kind of value sent,
 * unless the scalar is ours and already coded (its messages never embed the value). Structural
 * problems (a missing or unknown field, a null where none is allowed) name fields and types only and
 * are kept.
 */
function describe(
  variableType: GraphQLInputType,
  path: ReadonlyArray<string | number>,
  invalidValue: unknown,
  error: GraphQLError,
): string {
  const type = typeAt(variableType, path);
  const named = type && isNonNullType(type) ? type.ofType : type;
  if (!named || !isLeafType(named) || invalidValue === null || invalidValue === undefined) {
    return error.message;
  }
  if (typeof error.extensions?.code === 'string') return error.message;
  const expected = isEnumType(named) ? `a value of enum "${named.name}"` : `type "${named.name}"`;
  return `Expected ${expected}, got ${kindOf(invalidValue)}.${suggestionOf(error.message)}`;
}

/**
 * The coercion errors of the operation's variables (empty when they coerce). Coded
 * {@link VARIABLE_ERROR_CODE}; at most {@link MAX_VARIABLE_ERRORS} plus one saying more were left out.
 */
export function variableErrors(
  args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName' | 'variableValues'>,
  options: VariableErrorOptions = {},
): GraphQLError[] {
  const operation = getOperationAST(args.document, args.operationName);
  const definitions = operation?.variableDefinitions;
  if (!definitions || definitions.length === 0) return [];
  const inputs: unknown = args.variableValues ?? {};
  const errors: GraphQLError[] = [];
  const extensions = { ...options.extensions };
  const fail = (message: string, node: (typeof definitions)[number]): void => {
    if (errors.length <= MAX_VARIABLE_ERRORS) {
      // Recent graphql-js 16 releases honour hideSuggestions; stripping as well keeps this true on older ones.
      const text = options.hideSuggestions ? withoutSuggestions(message) : message;
      errors.push(
        codedError(VARIABLE_ERROR_CODE, {
          message:
            errors.length < MAX_VARIABLE_ERRORS
              ? text
              : 'Too many invalid variable values; the rest were not checked.',
          nodes: node,
          extensions,
        }),
      );
    }
  };
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
    // Yoga refuses such bodies first; kept so the function is total.
    return [codedError(VARIABLE_ERROR_CODE, { message: 'Variables must be a JSON object.', extensions })];
  }
  for (const definition of definitions) {
    if (errors.length > MAX_VARIABLE_ERRORS) break;
    const name = definition.variable.name.value;
    const type = typeFromAST(args.schema, definition.type);
    if (!type || !isInputType(type)) continue; // validation refuses this before us
    if (!Object.hasOwn(inputs, name)) {
      if (!definition.defaultValue && isNonNullType(type)) {
        fail(
          `Variable "$${name}" of required type "${print(definition.type)}" was not provided.`,
          definition,
        );
      }
      continue;
    }
    const value = (inputs as Record<string, unknown>)[name];
    if (value === null && isNonNullType(type)) {
      fail(`Variable "$${name}" of non-null type "${print(definition.type)}" must not be null.`, definition);
      continue;
    }
    try {
      coerceInputValue(
        value,
        type,
        (path, invalidValue, error) => {
          const where =
            path.length > 0
              ? ` at "${name}${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}"`
              : '';
          fail(
            `Variable "$${name}" got an invalid value${where}: ${describe(type, path, invalidValue, error)}`,
            definition,
          );
        },
        options.hideSuggestions ?? false,
      );
    } catch (error) {
      // A value nested deeper than the stack can walk (RangeError), or a throwing custom parser.
      fail(
        error instanceof RangeError
          ? `Variable "$${name}" is nested too deeply.`
          : `Variable "$${name}" got an invalid value.`,
        definition,
      );
    }
  }
  return errors;
}

/**
 * Checks variables before every execute and subscribe over HTTP (graphql-ws calls
 * {@link variableErrors} in its `onSubscribe`, so its errors answer that operation only).
 */
export function variableErrorsGuard(options: { hideSuggestions: boolean }): OperationGuard {
  const settings: VariableErrorOptions = {
    hideSuggestions: options.hideSuggestions,
    // `spec`: 400 for application/graphql-response+json, 200 for application/json (as Yoga does for
    // validation errors, following the GraphQL-over-HTTP spec).
    extensions: { http: { status: 400, spec: true } },
  };
  return {
    refusesSubscriptions: true,
    refuse(args) {
      const errors = variableErrors(args, settings);
      return errors.length ? { errors } : null;
    },
  };
}
