import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'sdk/dist/', 'coverage/', 'sdk/src/schema.ts'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // Fastify hooks and handlers are async by contract, whether or not they await.
      '@typescript-eslint/require-await': 'off',
      // Services are closures returned by factories, never classes: their functions use no
      // `this`, so routes pass them around as values.
      '@typescript-eslint/unbound-method': 'off',
      // Imports read the same in every file: node's, then packages, then ours from far to near,
      // each module named once (`eslint --fix` puts them in order).
      'import-x/order': [
        'error',
        {
          groups: ['builtin', 'external', 'parent', 'sibling', 'index'],
          alphabetize: { order: 'asc', caseInsensitive: true },
          'newlines-between': 'never',
        },
      ],
      'import-x/no-duplicates': ['error', { 'prefer-inline': true }],
    },
  },
  {
    // Errors are made by the named helpers of lib/errors.ts (notFound, conflict, invalid, ...),
    // so that a code's status, title and extra members are decided in one place.
    files: ['src/**'],
    // The CLI's client uses the SDK alone (lint:structure), and is no server: its scratch
    // directory goes with Node's rm.
    ignores: ['src/lib/errors.ts', 'src/lib/remove-tree.ts', 'src/cli/client/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='AppError']",
          message: 'Use a named helper of lib/errors.ts (add one there if none fits).',
        },
        {
          // Node's recursive rm starts every entry's calls at once on libuv's four threads.
          selector: "CallExpression[callee.name='rm'] > ObjectExpression > Property[key.name='recursive']",
          message: "Remove a directory tree with lib/remove-tree.ts's removeTree (a thread of its own).",
        },
      ],
    },
  },
  {
    // Tests read loosely typed JSON bodies; `any` there is the point of a response helper.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
);
