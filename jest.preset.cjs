// Shared Jest setup: swc transpiles TS (and the ESM-only http-proxy-middleware chain, Prisma's WASM
// schema engine bindings, the Vercel AI SDK, music-metadata and the OpenID Connect client and test provider) to CommonJS; type checking is the separate `typecheck` task.
// Every run gets a private database (packages depending on @modelgate/db or @modelgate/testing)
// and Redis key prefix, dropped afterwards: see packages/testing/src/global-setup.ts.
const path = require('node:path');

/** @param {string} dir the package directory */
module.exports = (dir, overrides = {}) => ({
  rootDir: dir,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': [require.resolve('@swc/jest'), {
      jsc: { target: 'es2023', parser: { syntax: 'typescript' } },
      module: { type: 'commonjs' },
    }],
    // The OTLP exporter's CommonJS build loads `http` with import(), which Jest's VM refuses.
    '@opentelemetry[/+]otlp-exporter-base.+\\.cjs$': [require.resolve('@swc/jest'), { module: { type: 'commonjs' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  // The AI SDK imports `zod/v4/locales/en.js`, which zod's exports map serves as ESM even to require().
  moduleNameMapper: { '^zod/v4/locales/(.+)\\.js$': 'zod/v4/locales/$1.cjs' },
  transformIgnorePatterns: [
    'node_modules/(?!(\\.pnpm/)?(http-proxy-middleware|httpxy|is-plain-obj|@prisma/schema-engine-wasm|@prisma\\+schema-engine-wasm|ai|@ai-sdk[/+][a-z-]+|@workflow[/+]serde|music-metadata|strtok3|token-types|file-type|uint8array-extras|win-guid|content-type|media-typer|@borewit[/+]text-codec|@tokenizer[/+]inflate|openid-client|oauth4webapi|jose|oidc-provider|@opentelemetry[/+]otlp-exporter-base)[@/])',
  ],
  testTimeout: 30000,
  maxWorkers: 1,
  setupFiles: [path.join(__dirname, 'packages/testing/src/jest-setup.ts')],
  globalSetup: path.join(__dirname, 'packages/testing/src/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'packages/testing/src/global-teardown.ts'),
  ...overrides,
});
