// Lint for every workspace, the scripts and the tests; type-aware rules catch floating promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Production code leans on public APIs only: each of these reached into Node, Fastify, pino, pg or
    // undici, and a minor release of any of them could break it silently.
    files: ['packages/*/src/**/*.ts', 'services/*/src/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^_/]',
          message: 'Underscore members are private to their library: use its public API.',
        },
        {
          selector: "CallExpression[callee.property.name='unshift'][arguments.length=1][callee.object.name=/socket/i]",
          message: "Data put back on a socket goes around Node's parser.",
        },
        {
          selector: "CallExpression[callee.object.name='Object'][callee.property.name='create'][arguments.0.name=/log/i]",
          message: "A logger built on another hides what it lacks from the type checker: use the library's own child().",
        },
      ],
      'no-restricted-properties': [
        'error',
        { property: 'shouldKeepAlive', message: "Node's internal keep-alive state: set a `Connection: close` header instead." },
        { property: 'removeAllListeners', message: "A library's own listeners are not ours to remove." },
        {
          property: 'listeners',
          message: "Replaying or replacing a library's own listeners depends on its internals (Fastify: serverFactory).",
        },
        { property: 'handleCopyData', message: "pg's internal COPY hook: use pg-copy-streams." },
        { property: 'connectTimeout', message: 'Deprecated in undici: use `connect: { timeout }`.' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
      },
    },
  },
  {
    // CommonJS, for the one script that must run on the old Nodes it replaces (scripts/own-node.cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
