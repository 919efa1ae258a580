/**
 * `GRAPHQL_FIELD_SUGGESTIONS=false`: no "Did you mean ...?" in any message. graphql-armor's switch
 * masks one wording (fields) at validation time only; graphql-js also suggests arguments, types, enum
 * values (`conversations(trigger: GUU)` -> `Did you mean the enum value "GUI"?`) and input fields, at
 * validation and during execution, and each suggestion names a part of the schema that introspection
 * being off is meant to hide. This plugin removes the suggestion from every error of validation
 * results and of execution and subscription results, whatever produced it.
 */
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { withMessage } from '../../errors.ts';

/**
 * graphql-js's `didYouMean` wording: ` Did you mean "a", "b", or "c"?`, ` Did you mean the enum value
 * "GUI"?`, ` Did you mean to use an inline fragment on "X"?`. Quoted schema names never contain `?`.
 */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

/** `message` without its suggestions. */
export function withoutSuggestions(message: string): string {
  return message.replace(SUGGESTION, '');
}

function hasSuggestion(error: { message: string }): boolean {
  return error.message.includes('Did you mean ');
}

/**
 * The same error with the suggestion taken out of its message. A new error rather than an edit:
 * graphql-jit's errors have a read-only `message`.
 */
function errorWithoutSuggestions(error: Error): GraphQLError | Error {
  if (!hasSuggestion(error)) return error;
  return withMessage(error, withoutSuggestions(error.message));
}

/** The result with every suggestion removed, or null when it has none. */
export function resultWithoutSuggestions(result: ExecutionResult): ExecutionResult | null {
  if (!result.errors?.some(hasSuggestion)) return null;
  return { ...result, errors: result.errors.map((error) => errorWithoutSuggestions(error) as GraphQLError) };
}

/** Strips suggestions from validation errors and from every result, HTTP and graphql-ws alike. */
export function useSuggestionsHidden(): Plugin {
  return {
    onValidate() {
      return ({ valid, result, setResult }) => {
        if (!valid && result.some(hasSuggestion)) setResult(result.map(errorWithoutSuggestions));
      };
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const stripped = resultWithoutSuggestions(result);
          if (stripped) setResult(stripped);
        },
      };
    },
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) {
            const stripped = resultWithoutSuggestions(result);
            if (stripped) setResult(stripped);
            return;
          }
          return {
            onNext({ result: next, setResult: replace }) {
              const stripped = resultWithoutSuggestions(next);
              if (stripped) replace(stripped);
            },
          };
        },
      };
    },
  };
}
