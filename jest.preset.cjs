// Shared Jest setup: swc transpiles TS (and the ESM-only http-proxy-middleware chain and Prisma's
// WASM schema engine bindings) to CommonJS; type checking is the separate `typecheck` task.
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
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  transformIgnorePatterns: [
    'node_modules/(?!(\\.pnpm/)?(http-proxy-middleware|httpxy|is-plain-obj|@prisma/schema-engine-wasm|@prisma\\+schema-engine-wasm)[@/])',
  ],
  testTimeout: 30000,
  maxWorkers: 1,
  setupFiles: [path.join(__dirname, 'packages/testing/src/jest-setup.ts')],
  globalSetup: path.join(__dirname, 'packages/testing/src/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'packages/testing/src/global-teardown.ts'),
  ...overrides,
});
