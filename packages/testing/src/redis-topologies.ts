// Real Redis topologies on loopback for the Sentinel and Cluster tests: redis-server processes on
// free ports, in a temporary directory, killed (SIGKILL: a crash, no goodbye) by the tests at will.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePorts, waitFor } from './processes';

const run = promisify(execFile);
const HOST = '127.0.0.1';
/** How long a silent master has until a Cluster or the sentinels fail it over. */
export const FAILOVER_DETECTION_MS = 1_000;

interface ServerProcess {
  port: number;
  child: ChildProcess;
}

function startServer(port: number, args: string[]): ServerProcess {
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  return { port, child };
}

function alive({ child }: ServerProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

async function kill(server: ServerProcess): Promise<void> {
  if (!alive(server)) return;
  const exit = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exit;
}

/** Runs `command` on the server at `port` with a throwaway connection. */
async function ask(port: number, ...command: string[]): Promise<unknown> {
  const redis = new Redis({ host: HOST, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(command[0]!, ...command.slice(1));
  } finally {
    redis.disconnect();
  }
}

/** `INFO replication` as a map. */
async function replicationInfo(port: number): Promise<Map<string, string>> {
  const text = String(await ask(port, 'INFO', 'replication'));
  return new Map(text.split('\r\n').filter((line) => line.includes(':')).map((line) => line.split(':', 2) as [string, string]));
}

const hostPorts = (ports: number[]) => ports.map((port) => `${HOST}:${port}`).join(',');

export interface RedisClusterTopology {
  /** The environment that points a service at it (REDIS_URL gives database 0). */
  env: { REDIS_URL: string; REDIS_CLUSTER_NODES: string };
  /** Kills the master serving `key`'s slot (as a crash would) and returns its port. */
  killMasterOf(key: string): Promise<number>;
  /** Resolves once every slot has a live master again (a replica took over). */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Cluster of `masters` masters with one replica each. Nodes fail over after FAILOVER_DETECTION_MS
 * of silence, and a replica may always take over (no validity limit), so a test sees it in seconds.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterTopology> {
  const count = masters * 2;
  const ports = await freePorts(count * 2);
  const dir = mkdtempSync(join(tmpdir(), 'mg-redis-cluster-'));
  const servers = Array.from({ length: count }, (_, i) => {
    const port = ports[i]!;
    return startServer(port, [
      '--port', String(port), '--cluster-port', String(ports[count + i]), '--bind', HOST,
      '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir,
      '--cluster-node-timeout', String(FAILOVER_DETECTION_MS), '--cluster-replica-validity-factor', '0',
      '--save', '', '--appendonly', 'no',
    ]);
  });
  const nodePorts = servers.map((server) => server.port);
  const stop = async () => {
    await Promise.all(servers.map(kill));
    rmSync(dir, { recursive: true, force: true });
  };
  const livePorts = () => servers.filter(alive).map((server) => server.port);
  const healthy = async () => {
    for (const port of livePorts()) {
      if (!String(await ask(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
    }
    return true;
  };
  try {
    for (const port of nodePorts) await waitFor(async () => (await ask(port, 'PING')) === 'PONG', `cluster node ${port}`, 10_000);
    await run('redis-cli', ['--cluster', 'create', ...nodePorts.map((port) => `${HOST}:${port}`), '--cluster-replicas', '1', '--cluster-yes']);
    await waitFor(healthy, 'the cluster to be ok on every node', 20_000, 100);
    // Every replica has its master's data: a failover then loses nothing written before.
    await waitFor(async () => {
      for (const port of nodePorts) {
        const info = await replicationInfo(port);
        if (info.get('role') === 'slave' && info.get('master_link_status') !== 'up') return false;
      }
      return true;
    }, 'every replica to be in sync', 20_000, 100);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    env: { REDIS_URL: `redis://${HOST}:${nodePorts[0]}`, REDIS_CLUSTER_NODES: hostPorts(nodePorts) },
    async killMasterOf(key) {
      const slot = Number(await ask(livePorts()[0]!, 'CLUSTER', 'KEYSLOT', key));
      const shards = (await ask(livePorts()[0]!, 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const shard = shards.find(([from, to]) => from <= slot && slot <= to);
      const server = servers.find((candidate) => candidate.port === shard?.[2][1]);
      if (!server) throw new Error(`no master serves slot ${slot}`);
      await kill(server);
      return server.port;
    },
    async waitForHealthy(timeoutMs = 20_000) {
      await waitFor(async () => {
        for (const port of livePorts()) {
          if ((await replicationInfo(port)).get('role') === 'master' && !String(await ask(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
        }
        return healthy();
      }, 'the cluster to be ok again', timeoutMs, 100);
    },
    stop,
  };
}

export interface RedisSentinelTopology {
  /** The environment that points a service at it (REDIS_URL's host is not used). */
  env: { REDIS_URL: string; REDIS_SENTINELS: string; REDIS_SENTINEL_NAME: string };
  /** The port of the current master, as the sentinels see it. */
  masterPort(): Promise<number>;
  /** Kills the current master (as a crash would) and returns its port. */
  killMaster(): Promise<number>;
  /** Resolves once the sentinels name a live master other than `port`. */
  waitForNewMaster(port: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

export const SENTINEL_MASTER_NAME = 'mgmaster';

/**
 * A master, one replica and three sentinels (quorum 2) watching them. They declare the master down
 * after FAILOVER_DETECTION_MS of silence and promote the replica.
 */
export async function startRedisSentinel(): Promise<RedisSentinelTopology> {
  const [masterPort, replicaPort, ...sentinelPorts] = (await freePorts(5)) as [number, number, number, number, number];
  const dir = mkdtempSync(join(tmpdir(), 'mg-redis-sentinel-'));
  const base = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir];
  const servers = [
    startServer(masterPort, ['--port', String(masterPort), ...base]),
    startServer(replicaPort, ['--port', String(replicaPort), '--replicaof', HOST, String(masterPort), ...base]),
  ];
  const stop = async () => {
    await Promise.all(servers.map(kill));
    rmSync(dir, { recursive: true, force: true });
  };
  const currentMaster = async () => {
    const [, port] = (await ask(sentinelPorts[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER_NAME)) as [string, string];
    return Number(port);
  };
  try {
    await waitFor(async () => (await replicationInfo(replicaPort)).get('master_link_status') === 'up', 'the replica to be in sync', 15_000);
    for (const port of sentinelPorts) {
      const file = join(dir, `sentinel-${port}.conf`);
      // Sentinels rewrite their configuration file, so each has its own.
      writeFileSync(file, [
        `port ${port}`,
        `bind ${HOST}`,
        `dir ${dir}`,
        `sentinel monitor ${SENTINEL_MASTER_NAME} ${HOST} ${masterPort} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} ${FAILOVER_DETECTION_MS}`,
        `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 5000`,
        `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
        '',
      ].join('\n'));
      servers.push(startServer(port, [file, '--sentinel']));
    }
    // Each sentinel knows the replica and the two other sentinels: a failover can be agreed on.
    await waitFor(async () => {
      for (const port of sentinelPorts) {
        const master = (await ask(port, 'SENTINEL', 'MASTER', SENTINEL_MASTER_NAME)) as string[];
        const field = (name: string) => master[master.indexOf(name) + 1];
        if (field('num-slaves') !== '1' || field('num-other-sentinels') !== '2') return false;
      }
      return true;
    }, 'the sentinels to know the replica and each other', 20_000, 100);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    env: { REDIS_URL: `redis://${HOST}:1`, REDIS_SENTINELS: hostPorts(sentinelPorts), REDIS_SENTINEL_NAME: SENTINEL_MASTER_NAME },
    masterPort: currentMaster,
    async killMaster() {
      const port = await currentMaster();
      const server = servers.find((candidate) => candidate.port === port);
      if (!server) throw new Error(`no server on the master's port ${port}`);
      await kill(server);
      return port;
    },
    async waitForNewMaster(port, timeoutMs = 20_000) {
      return waitFor(async () => {
        const current = await currentMaster();
        return current !== port && (await replicationInfo(current)).get('role') === 'master' && current;
      }, `a master other than ${port}`, timeoutMs, 100);
    },
    stop,
  };
}

export type RedisTopologyKind = 'cluster' | 'sentinel';

/** Either topology, as the tests that run a service on both use it. */
export interface RedisTopology {
  /** The environment that points a service at it. */
  env: Record<string, string>;
  /** Kills the master holding `key` (on a Cluster; Sentinel has one master) and waits until another serves it. */
  failOver(key: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisTopology(kind: RedisTopologyKind): Promise<RedisTopology> {
  if (kind === 'cluster') {
    const cluster = await startRedisCluster();
    return {
      env: cluster.env,
      async failOver(key) {
        await cluster.killMasterOf(key);
        await cluster.waitForHealthy();
      },
      stop: cluster.stop,
    };
  }
  const sentinel = await startRedisSentinel();
  return {
    env: sentinel.env,
    async failOver() {
      await sentinel.waitForNewMaster(await sentinel.killMaster());
    },
    stop: sentinel.stop,
  };
}
