import { dataEnvShape, EnvError, parseEnv, redisTargetOf, redisTopologyRefinement, z } from '../src';

const schema = z.object(dataEnvShape).superRefine(...redisTopologyRefinement);
const targetOf = (source: Record<string, string>) => redisTargetOf(parseEnv(schema, source));

it('is one server at REDIS_URL by default', () => {
  expect(targetOf({})).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379' });
});

it('reads sentinels and their master group; REDIS_URL keeps the password and database', () => {
  expect(targetOf({ REDIS_URL: 'redis://:secret@unused:1/2', REDIS_SENTINELS: 'sentinel-0:26379, 10.0.0.7:26380,[::1]:26381', REDIS_SENTINEL_NAME: 'mymaster' })).toEqual({
    kind: 'sentinel',
    url: 'redis://:secret@unused:1/2',
    sentinels: [
      { host: 'sentinel-0', port: 26379 },
      { host: '10.0.0.7', port: 26380 },
      { host: '::1', port: 26381 },
    ],
    name: 'mymaster',
  });
});

it('reads cluster nodes', () => {
  expect(targetOf({ REDIS_CLUSTER_NODES: 'redis-0:6379,redis-1:6379' })).toEqual({
    kind: 'cluster',
    url: 'redis://127.0.0.1:6379',
    nodes: [
      { host: 'redis-0', port: 6379 },
      { host: 'redis-1', port: 6379 },
    ],
  });
});

it('lists every inconsistency of the Redis variables at once', () => {
  expect(() => parseEnv(schema, { REDIS_SENTINELS: 'a:1', REDIS_CLUSTER_NODES: 'b:2', REDIS_URL: 'redis://x:1/3' })).toThrow(
    new EnvError([
      'REDIS_CLUSTER_NODES: cannot be set with REDIS_SENTINELS: choose one topology',
      'REDIS_SENTINEL_NAME: is required with REDIS_SENTINELS',
      'REDIS_URL: must select database 0 (or none) with REDIS_CLUSTER_NODES: a Cluster has no other',
    ]),
  );
  expect(() => parseEnv(schema, { REDIS_SENTINEL_NAME: 'mymaster' })).toThrow(new EnvError(['REDIS_SENTINELS: is required with REDIS_SENTINEL_NAME']));
});

it.each(['redis-0', 'redis-0:0', 'redis-0:6379,', ':6379', 'a b:1'])('refuses %j as a node list', (text) => {
  expect(() => parseEnv(schema, { REDIS_CLUSTER_NODES: text })).toThrow(/REDIS_CLUSTER_NODES: ".*" is not host:port/);
});
