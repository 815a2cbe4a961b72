export { TEST_CRYPTO_SECRET, TEST_PASSWORD } from './constants';
export { createTestPrisma, resetDatabase, testDatabaseUrl } from './database';
export {
  type ApiKeyOverrides,
  type ChannelOverrides,
  createApiKey,
  createChannel,
  createUser,
  generateApiKey,
  setOption,
  type UserOverrides,
} from './factories';
export { closeRedis, createTestRedis, deleteKeysWithPrefix, redisPrefix, testRedisUrl } from './redis';
export { createTestDatabase, dropTestDatabase, type TestDatabase } from './test-database';
