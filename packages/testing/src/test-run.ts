/** What global-setup.ts created, handed to global-teardown.ts (same process, different module). */
export interface TestRun {
  serverUrl: string;
  databaseName?: string;
  redisUrl: string;
  redisPrefix: string;
}

export const TEST_RUN_KEY = '__modelgateTestRun';
