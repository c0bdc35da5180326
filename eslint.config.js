import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noBuiltinImport = {
  selector: 'ImportExpression[source.value=/^node:/]',
  message:
    'A dynamic import() of a Node builtin fails inside the single executable (no module loader): use process.getBuiltinModule or a static import.',
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.gds-tmp/', 'src/contract/types.gen.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-control-regex': 'off',
      'no-restricted-syntax': ['error', noBuiltinImport],
    },
  },
  {
    // gds's own modules are imported statically; `await import()` is for a heavy library, in the one module
    // that wraps it (docs/architecture.md). The command table loads each command when it runs, as oclif does.
    files: ['src/**/*.ts'],
    ignores: ['src/commands/loaders.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        noBuiltinImport,
        {
          selector: 'ImportExpression[source.value=/^[./]/]',
          message:
            "Import gds's own modules statically. A library that would slow every start-up is loaded by the one module that wraps it (await import('library')), and the modules built on it take it as a parameter.",
        },
        {
          selector: 'ImportExpression > :not(Literal).source',
          message: 'Name what import() loads with a string literal, so that lint and the bundler can see it.',
        },
      ],
    },
  },
  {
    // The bench's floors: what plain Node needs for a command's work, in CommonJS as gds's bundles run.
    files: ['scripts/bench/floors/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
