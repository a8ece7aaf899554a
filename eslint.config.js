// Lint: typescript-eslint with type information, `npm run lint` (docs/testing.md#lint-and-format).
// Formatting is Prettier's alone: eslint-config-prettier turns off the rules it owns.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import gerbang from './scripts/eslint/client-keys.mjs';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/', 'data/', 'web/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      // The program of src and scripts (tsconfig.lint.json): tests and web/ are linted without types (below).
      parserOptions: { project: ['./tsconfig.lint.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // The log store's tables differ per dialect (Kysely<any>), and JSON is untyped at the edges
      // until a schema has checked it; `any` is allowed there, but using it unsafely in src/ is not.
      '@typescript-eslint/no-explicit-any': 'off',
      // Fastify hooks and handlers are async functions whether or not they await.
      '@typescript-eslint/require-await': 'off',
      // Its autofix drops assertions that contextual typing needs (a literal union in a mapped array).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'test', 'it', 'suite'] }] },
      ],
    },
  },
  {
    // Names a client chose are data, never keys of a plain object (scripts/eslint/client-keys.mjs).
    // Where names from clients, shippers, identity providers and upstreams arrive (the CLI, the
    // supervisor, migrations and the gateway's own telemetry name only what the code chose).
    files: ['src/logs/**/*.ts', 'src/shared/**/*.ts', 'src/gateway/modules/**/*.ts'],
    ignores: ['src/*/db/migrations/**', 'src/**/*migrations.ts', 'src/gateway/modules/telemetry/**'],
    plugins: { gerbang },
    rules: { 'gerbang/client-keys': 'error' },
  },
  {
    // Tests and the browser console are linted without type information: with them, ESLint took
    // 56-64 s on the 2-vCPU VM, without them 33 s (the console's program alone costs 8-10 s: the DOM
    // library), and `npm run lint` must stay under 45 s (docs/testing.md). `npm run typecheck` still
    // checks their types; the typed rules stay on the services (src/) and scripts, where a floating
    // promise can take a process down. What a typed rule caught in tests that makes one unable to
    // fail, an assertion on a promise left unawaited, is caught by syntax instead.
    files: ['test/**', 'web/**'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ExpressionStatement > CallExpression[callee.object.name='assert'][callee.property.name=/^(rejects|doesNotReject)$/]",
          message: 'Await (or return) assert.rejects / assert.doesNotReject: a floating assertion cannot fail the test.',
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
