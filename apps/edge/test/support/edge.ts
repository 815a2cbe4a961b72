import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEnv } from '@modelgate/config';
import { listen } from '@modelgate/http';
import { createLogger, type Logger } from '@modelgate/logger';
import { buildApp, type EdgeApp } from '../../src/app';
import { edgeEnvSchema } from '../../src/env';

export interface RunningEdge {
  url: string;
  edge: EdgeApp;
  stop(): Promise<void>;
}

/** The edge app on a random port, configured through its real env schema. */
export async function startEdge(env: Record<string, string>, logger?: Logger): Promise<RunningEdge> {
  const config = parseEnv(edgeEnvSchema, env);
  const edge = buildApp(config, { logger: logger ?? createLogger({ service: 'edge', level: 'silent' }), readinessTimeoutMs: 1000 });
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
