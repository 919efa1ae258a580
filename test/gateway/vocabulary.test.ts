/**
 * The graph's enums know every value either API's wire declares: a V1 conversation started by
 * `automation` or on `azure_devops` reads AUTOMATION / AZURE_DEVOPS, not UNKNOWN. The port's vocabulary
 * (src/upstream/port/vocabulary.ts) is the union of both contracts; this holds the committed schema to it.
 */
import { readFileSync } from 'node:fs';
import { buildSchema, type GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { GIT_PROVIDERS } from '../../src/contract/common.ts';
import { CONVERSATION_TRIGGERS } from '../../src/contract/v0/records.ts';
import { V1_GIT_PROVIDERS, V1_TRIGGERS } from '../../src/contract/v1/app-server.ts';

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

function enumNames(name: string): string[] {
  return (schema.getType(name) as GraphQLEnumType).getValues().map((value) => value.name);
}

describe('the graph vocabulary covers both APIs', () => {
  it.each([
    ['ConversationTrigger', [...CONVERSATION_TRIGGERS, ...V1_TRIGGERS]],
    ['GitProvider', [...GIT_PROVIDERS, ...V1_GIT_PROVIDERS]],
  ])('%s has a value for every wire value of V0 and V1, and UNKNOWN', (enumName, wireValues) => {
    const names = enumNames(enumName);
    expect(names).toEqual(
      expect.arrayContaining([...wireValues.map((wire) => wire.toUpperCase()), 'UNKNOWN']),
    );
    expect(names).toHaveLength(new Set(wireValues).size + 1);
  });
});
