import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'src/contract/types.gen.ts'] },
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
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^node:/]',
          message:
            'A dynamic import() of a Node builtin fails inside the single executable (no module loader): use process.getBuiltinModule or a static import.',
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
