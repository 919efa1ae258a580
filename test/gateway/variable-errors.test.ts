/**
 * The variable check itself, on the gateway's schema: paths inside lists and input objects, the error
 * cap, suggestions on and off, values never echoed; and a property that it agrees with the executors
 * (whatever it lets through, graphql-jit never rejects uncoded). Transport behaviour (statuses,
 * graphql-ws) is in test/hardening/operation-errors.test.ts.
 */
import fc from 'fast-check';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/gateway/observability/logging.ts';
import { MAX_VARIABLE_ERRORS, variableErrors } from '../../src/gateway/protection/variable-errors.ts';
import { createGateway } from '../../src/gateway/yoga.ts';
import { schema } from '../../src/schema/index.ts';
import { sendJson, startMisbehavingUpstream } from '../helpers/misbehaving-upstream.ts';

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

describe('the check agrees with the executors (graphql-jit for queries and mutations, graphql-js for subscriptions)', () => {
  const OPERATIONS = [
    'query L($f: Int, $t: ConversationTrigger, $r: String) { conversations(first: $f, trigger: $t, repository: $r) { edges { cursor } } }',
    NODES,
    CREATE,
    'query One($id: ID!) { conversation(id: $id) { id } }',
  ];

  it('random JSON variables: never a 5xx, every error coded, variable errors without data', async () => {
    const upstream = await startMisbehavingUpstream((req, res) =>
      sendJson(res, 200, req.method === 'GET' ? { results: [], next_page_id: null } : {}),
    );
    const gateway = createGateway({
      upstreamUrl: upstream.url,
      upstreamApi: 'v0',
      upstream: { retries: 0 },
      logger: createLogger({ level: 'silent' }),
      hardening: { rateLimit: false, metrics: false },
    });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...OPERATIONS),
          fc.dictionary(
            fc.constantFrom('f', 't', 'r', 'ids', 'input', 'id', '__proto__'),
            fc.jsonValue({ maxDepth: 3 }),
          ),
          async (query, variables) => {
            const response = await gateway.yoga.fetch('http://gateway/graphql', {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
              body: JSON.stringify({ query, variables }),
            });
            const body = (await response.json()) as {
              data?: unknown;
              errors?: Array<{ message: string; extensions?: { code?: unknown } }>;
            };
            expect(response.status, JSON.stringify(body)).toBeLessThan(500);
            for (const error of body.errors ?? []) {
              expect(typeof error.extensions?.code, error.message).toBe('string');
              expect(error.extensions?.code, error.message).not.toBe('INTERNAL_SERVER_ERROR');
            }
            if (
              body.errors?.some(
                (error) =>
                  error.extensions?.code === 'BAD_USER_INPUT' && error.message.startsWith('Variable'),
              )
            ) {
              expect(response.status).toBe(400);
              expect(body).not.toHaveProperty('data');
            }
          },
        ),
        { numRuns: 300, seed: 20261123 },
      );
    } finally {
      await gateway.close();
      await upstream.close();
    }
  }, 60_000);
});
