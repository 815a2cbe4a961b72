// The connection factories on a real Cluster (three masters with a replica each) and a real
// Sentinel setup (master, replica, three sentinels): commands, pub/sub and a BullMQ queue, each
// after its master is killed too.
import { dataEnvShape, parseEnv, redisTargetOf, redisTopologyRefinement, type RedisTarget, z } from '@modelgate/config';
import { redisPrefix } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import { type RedisTopology, startRedisTopology } from '@modelgate/testing/redis-topologies';
import type { EventEmitter } from 'node:events';
import {
  bullPrefix,
  closeRedis,
  createMailQueue,
  createMailWorker,
  createProducerConnection,
  createServiceRedis,
  createWorkerConnection,
  duplicateRedis,
  enqueueMail,
  invalidationChannel,
  type MailJob,
  publishCacheInvalidation,
  type Queue,
  type RedisClient,
  type Worker,
} from '../src';
import { assertRedisDatabase } from '../src/redis-database';

jest.setTimeout(60_000);

const schema = z.object(dataEnvShape).superRefine(...redisTopologyRefinement);

describe.each(['cluster', 'sentinel'] as const)('on a Redis %s', (kind) => {
  let topology: RedisTopology;
  let target: RedisTarget;
  let service: RedisClient;
  let producer: RedisClient;
  let consumer: RedisClient;
  let subscriber: RedisClient;
  let queue: Queue<MailJob>;
  let worker: Worker<MailJob>;
  const processed: string[] = [];
  const messages: string[] = [];
  const prefix = redisPrefix();

  beforeAll(async () => {
    topology = await startRedisTopology(kind);
    // Sentinel: REDIS_URL's host is not used, its database is.
    target = redisTargetOf(parseEnv(schema, kind === 'sentinel' ? { ...topology.env, REDIS_URL: 'redis://127.0.0.1:1/3' } : topology.env));
    expect(target.kind).toBe(kind);
    service = createServiceRedis(target, { lazyConnect: true });
    (service as EventEmitter).on('error', () => undefined);
    await service.connect();
    producer = createProducerConnection(target);
    consumer = createWorkerConnection(target);
    subscriber = duplicateRedis(service, { maxRetriesPerRequest: null, enableOfflineQueue: true, lazyConnect: false });
    for (const client of [producer, consumer, subscriber]) (client as EventEmitter).on('error', () => undefined);
    (subscriber as EventEmitter).on('message', (_channel: string, text: string) => messages.push(text));
    await subscriber.subscribe(invalidationChannel(prefix));
    queue = createMailQueue(producer, prefix);
    queue.on('error', () => undefined);
    worker = createMailWorker(consumer, prefix, async (_job, data) => void processed.push(data.subject));
    worker.on('error', () => undefined);
  });

  afterAll(async () => {
    await worker?.close(true);
    await queue?.close();
    for (const client of [subscriber, consumer, producer, service]) if (client) await closeRedis(client);
    await topology?.stop();
  });

  it('reads the environment into its topology, with the URL giving the password and database', () => {
    if (target.kind === 'sentinel') expect(target.url).toBe('redis://127.0.0.1:1/3');
    expect(bullPrefix(prefix, producer)).toBe(kind === 'cluster' ? `${prefix}{bull}` : `${prefix}bull`);
  });

  it('runs commands, in the database REDIS_URL selects', async () => {
    await assertRedisDatabase(service);
    await service.set(`${prefix}probe`, 'yes');
    expect(await service.get(`${prefix}probe`)).toBe('yes');
    if (kind === 'sentinel') expect((service as { options: { db?: number } }).options.db).toBe(3);
  });

  it('delivers cache invalidations over pub/sub', async () => {
    await publishCacheInvalidation(service, prefix, { kind: 'options' });
    await waitFor(() => messages.length > 0, 'the invalidation message', 5_000);
    expect(JSON.parse(messages[0]!)).toEqual({ kind: 'options' });
  });

  it('queues and processes BullMQ jobs, every key of a queue in one slot', async () => {
    await enqueueMail(queue, { to: 'a@example.com', subject: 'first', text: 'body' });
    await waitFor(() => processed.includes('first'), 'the first job', 10_000);
  });

  it('carries on after its master is killed: commands, jobs and pub/sub', async () => {
    const key = `${bullPrefix(prefix, producer)}:mail:wait`;
    await topology.failOver(key);
    await waitFor(async () => (await service.set(`${prefix}probe`, 'again')) === 'OK', 'a command after the failover', 15_000, 100);
    await waitFor(async () => {
      await enqueueMail(queue, { to: 'a@example.com', subject: 'second', text: 'body' });
      return true;
    }, 'a job queued after the failover', 15_000, 200);
    await waitFor(() => processed.includes('second'), 'the job queued after the failover', 20_000);
    const before = messages.length;
    await waitFor(async () => {
      await publishCacheInvalidation(service, prefix, { kind: 'options' });
      return messages.length > before;
    }, 'an invalidation after the failover', 20_000, 500);
  });
});
