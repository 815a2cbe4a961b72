import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** `no-restricted-imports` per layer of apps/relay/src: each layer may import only the ones below it. */
function relayLayers() {
  const above = {
    core: ['features', 'providers', 'dialects', 'endpoints'],
    features: ['providers', 'dialects', 'endpoints'],
    providers: ['dialects', 'endpoints'],
    dialects: ['endpoints', 'providers/registry'],
  };
  return Object.entries(above).map(([layer, forbidden]) => ({
    files: [`apps/relay/src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: forbidden.flatMap((name) => [`**/${name}`, `**/${name}/**`]), message: `apps/relay/src/${layer} must not import from a layer above it` }] },
      ],
    },
  }));
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/src/generated/**', '**/coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // Type-aware rules for every TypeScript file, each checked with the tsconfig of its package.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  // The relay's layers (src/core <- features <- providers <- dialects <- endpoints <- app): no import
  // runs back up. Providers know nothing of clients; the pipeline is handed a provider per channel.
  ...relayLayers(),
  {
    files: ['**/*.mjs', '**/*.cjs', 'scripts/**', '**/scripts/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', fetch: 'readonly', Buffer: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable' } },
    rules: { 'no-console': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
);
