import type { Redis } from 'ioredis';
import { createTestRedis, deleteKeysWithPrefix, redisPrefix } from '../src';

let redis: Redis;
beforeAll(() => {
  redis = createTestRedis();
});
afterAll(() => redis.quit());

describe('deleteKeysWithPrefix', () => {
  it('deletes every key under the prefix, of any type, and nothing else', async () => {
    const prefix = `${redisPrefix()}scratch:`;
    const neighbour = `${redisPrefix()}scratch-neighbour`;
    await redis.set(`${prefix}string`, 'v');
    await redis.hset(`${prefix}hash`, 'f', 'v');
    await redis.zadd(`${prefix}zset`, 1, 'm');
    await redis.set(neighbour, 'v');
    expect(await deleteKeysWithPrefix(redis, prefix)).toBe(3);
    expect(await redis.exists(`${prefix}string`, `${prefix}hash`, `${prefix}zset`)).toBe(0);
    expect(await redis.get(neighbour)).toBe('v');
    await redis.del(neighbour);
  });

  it('refuses a prefix with glob characters', async () => {
    await expect(deleteKeysWithPrefix(redis, 'mgtest:*')).rejects.toThrow('unexpected Redis prefix');
  });
});
