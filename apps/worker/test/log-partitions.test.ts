// `logs` is partitioned by month (CONTRACT 6): the worker's job creates the months ahead, once
// across replicas and harmlessly twice, and LogRetentionDays drops whole months while the ledger
// invariant and the usage aggregates hold.
import { ledgerMismatches, type PrismaClient } from '@modelgate/db';
import { createLogger } from '@modelgate/logger';
import {
  closeRedis,
  createLogPartitionsQueue,
  createProducerConnection,
  createWorkerConnection,
  type LogPartitionsJob,
  type Queue,
  type Redis,
  scheduleLogPartitions,
  type Worker,
} from '@modelgate/queue';
import { createTestPrisma, createUser, redisPrefix, resetDatabase, setOption, testRedisUrl } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import { startLogPartitionsWorker } from '../src/features/log-partitions/log-partitions-worker';
import { runLogPartitions } from '../src/features/log-partitions/service';

jest.setTimeout(60_000);

let prisma: PrismaClient;

beforeAll(async () => {
  prisma = createTestPrisma();
  await resetDatabase(prisma);
});
afterAll(() => prisma.$disconnect());

async function partitionOf(id: bigint): Promise<string | undefined> {
  const [row] = await prisma.$queryRawUnsafe<{ partition: string }[]>('SELECT tableoid::regclass::text AS partition FROM logs WHERE id = $1', id);
  return row?.partition;
}

async function partitions(): Promise<string[]> {
  const rows = await prisma.$queryRawUnsafe<{ name: string }[]>("SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'logs'::regclass ORDER BY 1");
  return rows.map((row) => row.name);
}

describe('creating partitions ahead', () => {
  it('creates the current month and the next two, once, even when two runs meet', async () => {
    const now = new Date(Date.UTC(2031, 10, 20, 12));
    const [first, second] = await Promise.all([runLogPartitions(prisma, now), runLogPartitions(prisma, now)]);
    expect([...first.created, ...second.created].sort()).toEqual(['logs_203111', 'logs_203112', 'logs_203201']);
    expect(await runLogPartitions(prisma, now)).toEqual({ created: [], dropped: [] });
    expect(await partitions()).toEqual(expect.arrayContaining(['logs_203111', 'logs_203112', 'logs_203201', 'logs_default']));

    const user = await createUser(prisma);
    const row = await prisma.log.create({ data: { userId: user.id, type: 4, createdAt: new Date(Date.UTC(2031, 11, 31, 23, 59, 59, 999)) } });
    expect(await partitionOf(row.id)).toBe('logs_203112');
  });

  it('never refuses a row no month covers, and moves it into its month once that is created', async () => {
    const user = await createUser(prisma);
    const early = await prisma.log.create({ data: { userId: user.id, type: 4, createdAt: new Date(Date.UTC(2033, 4, 20)) } });
    expect(await partitionOf(early.id)).toBe('logs_default');

    expect((await runLogPartitions(prisma, new Date(Date.UTC(2033, 4, 1)))).created).toEqual(['logs_203305', 'logs_203306', 'logs_203307']);
    expect(await partitionOf(early.id)).toBe('logs_203305');
    // Attached partitions get the parent's indexes and foreign key.
    const indexes = await prisma.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'logs_203305'");
    expect(indexes).toEqual([{ n: 5 }]);
    await expect(prisma.log.create({ data: { userId: 2_000_000_000, type: 4, createdAt: new Date(Date.UTC(2033, 4, 2)) } })).rejects.toThrow();
  });
});

describe('LogRetentionDays', () => {
  afterEach(() => setOption(prisma, 'LogRetentionDays', '0'));

  it('drops the months that ended before it, carrying each user\'s net amount into one row, and keeps usage_buckets', async () => {
    await runLogPartitions(prisma, new Date(Date.UTC(2020, 0, 15)));
    const alice = await createUser(prisma);
    const bob = await createUser(prisma);
    const rows = [
      { userId: alice.id, type: 1, quota: 1_000n, createdAt: new Date(Date.UTC(2020, 0, 3)) },
      { userId: alice.id, type: 2, quota: -120n, modelName: 'gpt-a', createdAt: new Date(Date.UTC(2020, 0, 31, 23, 59, 59, 999)) },
      { userId: bob.id, type: 1, quota: 50n, createdAt: new Date(Date.UTC(2020, 0, 4)) },
      { userId: bob.id, type: 2, quota: -50n, modelName: 'gpt-a', createdAt: new Date(Date.UTC(2020, 0, 5)) },
      { userId: alice.id, type: 2, quota: -30n, modelName: 'gpt-a', createdAt: new Date(Date.UTC(2020, 1, 1)) },
    ];
    await prisma.log.createMany({ data: rows });
    await prisma.user.update({ where: { id: alice.id }, data: { quota: 850n } });
    await prisma.usageBucket.create({ data: { userId: alice.id, bucket: BigInt(Date.UTC(2020, 0, 31, 23) / 1000), modelName: 'gpt-a', requests: 1n, quota: 120n } });
    const buckets = await prisma.usageBucket.findMany();

    // 0 keeps everything.
    expect((await runLogPartitions(prisma, new Date(Date.UTC(2020, 2, 20)))).dropped).toEqual([]);

    // 30 days before 2020-03-20 is 2020-02-19: January has ended by then, February has not.
    await setOption(prisma, 'LogRetentionDays', '30');
    expect(await runLogPartitions(prisma, new Date(Date.UTC(2020, 2, 20)))).toEqual({ created: [], dropped: ['logs_202001'] });
    expect(await partitions()).not.toContain('logs_202001');
    expect(await partitions()).toContain('logs_202002');

    const left = await prisma.log.findMany({ where: { userId: { in: [alice.id, bob.id] } }, orderBy: { id: 'asc' }, select: { userId: true, type: true, quota: true, createdAt: true, content: true } });
    expect(left).toEqual([
      { userId: alice.id, type: 2, quota: -30n, createdAt: new Date(Date.UTC(2020, 1, 1)), content: '' },
      // Bob's rows summed to 0: nothing to carry.
      { userId: alice.id, type: 4, quota: 880n, createdAt: new Date(Date.UTC(2020, 1, 1)), content: 'Net amount of the log rows before 2020-02-01, removed after LogRetentionDays' },
    ]);
    expect(await ledgerMismatches(prisma)).toEqual([]);
    expect(await prisma.usageBucket.findMany()).toEqual(buckets);

    // Run again: nothing more to drop.
    expect(await runLogPartitions(prisma, new Date(Date.UTC(2020, 2, 20)))).toEqual({ created: [], dropped: [] });
  });
});

describe('the scheduled job', () => {
  let producer: Redis;
  const consumers: Redis[] = [];
  const workers: Worker<LogPartitionsJob>[] = [];
  let queue: Queue<LogPartitionsJob>;

  afterAll(async () => {
    for (const worker of workers) await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    for (const connection of [...consumers, producer]) await closeRedis(connection);
  });

  it('is scheduled once however many workers start, and runs at their start', async () => {
    producer = createProducerConnection(testRedisUrl());
    queue = createLogPartitionsQueue(producer, redisPrefix());
    const logger = createLogger({ service: 'worker-test', level: 'silent' });
    let runs = 0;
    for (let replica = 0; replica < 2; replica++) {
      const connection = createWorkerConnection(testRedisUrl());
      consumers.push(connection);
      const worker = startLogPartitionsWorker({ prisma, logger, connection, redisPrefix: redisPrefix(), lockDurationMs: 30_000, stalledIntervalMs: 30_000 });
      worker.on('completed', () => runs++);
      workers.push(worker);
    }
    await Promise.all([scheduleLogPartitions(queue), scheduleLogPartitions(queue)]);

    expect(await queue.getJobSchedulersCount()).toBe(1);
    await waitFor(async () => runs >= 1, 'the run at start');
    const month = new Date();
    const current = `logs_${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
    expect(await partitions()).toContain(current);
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed');
    // What is left is the next daily run, due in a day.
    expect(counts).toEqual({ waiting: 0, active: 0, delayed: 1 });
  });
});
