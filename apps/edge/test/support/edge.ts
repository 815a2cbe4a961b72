import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEnv } from '@modelgate/config';
import { listen } from '@modelgate/http';
import { createLogger, type Logger } from '@modelgate/logger';
import { Agent } from 'undici';
import { buildApp, type EdgeApp } from '../../src/app';
import { edgeEnvSchema } from '../../src/env';
import { startStandIn, type StandInService } from './stand-in-service';

export interface RunningEdge {
  url: string;
  edge: EdgeApp;
  stop(): Promise<void>;
}

/** The edge app on a random port, configured through its real env schema. */
export async function startEdge(env: Record<string, string>, logger?: Logger): Promise<RunningEdge> {
  const config = parseEnv(edgeEnvSchema, env);
  const edge = buildApp(config, { logger: logger ?? createLogger({ service: 'edge', level: 'silent' }), healthTimeoutMs: 1000 });
  const server: Server = await listen(edge.app, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    edge,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      edge.close();
    },
  };
}

export interface EdgeBetweenStandIns {
  relay: StandInService;
  account: StandInService;
  console: StandInService;
  edge: RunningEdge;
  /** A keep-alive client for the file's requests. */
  client: Agent;
}

/** Registers hooks that run an edge in front of three stand-in services (relay, account, console) for a test file's tests. */
export function useEdgeBetweenStandIns(): EdgeBetweenStandIns {
  const stack = { client: new Agent() } as EdgeBetweenStandIns;
  beforeAll(async () => {
    stack.relay = await startStandIn();
    stack.account = await startStandIn();
    stack.console = await startStandIn();
    stack.edge = await startEdge({ RELAY_URL: stack.relay.url, ACCOUNT_URL: stack.account.url, CONSOLE_URL: stack.console.url });
  });
  afterAll(async () => {
    await stack.client.close();
    await stack.edge.stop();
    await stack.relay.stop();
    await stack.account.stop();
    await stack.console.stop();
  });
  return stack;
}
