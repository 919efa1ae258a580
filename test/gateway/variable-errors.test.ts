/**
 * The variable check itself, on the gateway's schema: paths inside lists and input objects, the error
 * cap, suggestions on and off, and values that are never echoed. Transport behaviour (statuses,
 * graphql-ws) is in test/hardening/operation-errors.test.ts.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MAX_VARIABLE_ERRORS, variableErrors } from '../../src/gateway/variable-errors.ts';
import { schema } from '../../src/schema/index.ts';

function check(query: string, variableValues: Record<string, unknown>, hideSuggestions = false) {
  return variableErrors(
    { schema, document: parse(query), operationName: null, variableValues },
    { hideSuggestions },
  ).map((error) => ({ message: error.message, code: error.extensions.code }));
}

const NODES = 'query N($ids: [ID!]!) { nodes(ids: $ids) { id } }';
const CREATE =
  'mutation C($input: CreateConversationInput!) { createConversation(input: $input) { __typename } }';

describe('variableErrors', () => {
  it('answers nothing for variables that coerce, and for operations without variables', () => {
    expect(check(NODES, { ids: ['a', 'b'] })).toEqual([]);
    expect(check('{ __typename }', { unused: 1 })).toEqual([]);
  });

  it('names the path inside lists and input objects', () => {
    expect(check(NODES, { ids: ['a', { secret: 'x' }] })).toEqual([
      {
        message: 'Variable "$ids" got an invalid value at "ids[1]": Expected type "ID", got an object.',
        code: 'BAD_USER_INPUT',
      },
    ]);
    expect(check(CREATE, { input: { mcpConfig: { sseServers: [{ apiKey: 'k' }] } } })).toEqual([
      {
        message:
          'Variable "$input" got an invalid value at "input.mcpConfig.sseServers[0]": Field "url" of required type "String!" was not provided.',
        code: 'BAD_USER_INPUT',
      },
    ]);
  });

  it(`caps the errors of one operation at ${MAX_VARIABLE_ERRORS} plus one saying so`, () => {
    const errors = check(NODES, { ids: Array.from({ length: 3000 }, () => ({})) });
    expect(errors).toHaveLength(MAX_VARIABLE_ERRORS + 1);
    expect(errors.at(-1)?.message).toBe('Too many invalid variable values; the rest were not checked.');
  });

  it('suggests only when suggestions are on, and never repeats the value', () => {
    const query =
      'query T($t: ConversationTrigger) { conversations(first: 1, trigger: $t) { edges { cursor } } }';
    expect(check(query, { t: 'GUU' })[0]?.message).toMatch(/Did you mean the enum value "GUI"\?$/);
    expect(check(query, { t: 'GUU' }, true)[0]?.message).toBe(
      'Variable "$t" got an invalid value: Expected a value of enum "ConversationTrigger", got a string.',
    );
    expect(check(CREATE, { input: { initialUserMesage: 'x' } }, true)[0]?.message).not.toMatch(
      /Did you mean/,
    );
    expect(JSON.stringify(check(CREATE, { input: { gitProvider: 'sk-do-not-echo' } }))).not.toContain(
      'sk-do-not-echo',
    );
  });
});
