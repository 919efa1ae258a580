/**
 * GraphQL Code Generator: typed documents for the tests from the committed schema.graphql.
 * `npm run codegen` writes test/generated/; a test fails when the committed output is stale.
 * `importExtension: '.ts'` keeps the output valid under NodeNext resolution (the preset otherwise emits
 * extensionless imports that only `moduleResolution: bundler` accepts).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/gateway/documents.ts'],
  ignoreNoDocuments: false,
  importExtension: '.ts',
  generates: {
    'test/generated/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false, gqlTagName: 'graphql' },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTime: 'string', ID: 'string' },
      },
    },
  },
};

export default config;
