import { closeServer, exitOnBootFailure, listen, runService } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { startTracing } from '@modelgate/telemetry';
import { buildApp } from './app';
import { loadEdgeEnv } from './env';

/**
 * Longer than the idle timeout of clients and load balancers in front of us (commonly 60 s), so
 * the edge is never the side that closes a connection a client is about to reuse.
 */
const CLIENT_KEEP_ALIVE_TIMEOUT_MS = 75_000;

async function main(): Promise<void> {
  const env = loadEdgeEnv();
  const logger = createLogger({ service: 'edge', level: env.LOG_LEVEL });
  const stopTracing = await startTracing({ serviceName: env.OTEL_SERVICE_NAME ?? 'edge', endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT });
  const edge = buildApp(env, { logger, defaultMetrics: true });
  // Metrics first: a port clash fails the start before the edge takes traffic.
  const metricsServer = await listen(edge.metricsApp, env.EDGE_METRICS_PORT, env.HOST);
  logger.info({ port: env.EDGE_METRICS_PORT }, 'edge metrics listening');
  const server = await runService(edge.app, {
    name: 'edge',
    logger,
    host: env.HOST,
    port: env.EDGE_PORT,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    keepAliveTimeoutMs: CLIENT_KEEP_ALIVE_TIMEOUT_MS,
    // Scrapes keep working while the public port drains.
    // Spans are flushed last: the drain's own are among them.
    closers: [() => edge.close(), () => closeServer(metricsServer), stopTracing],
  });
  server.headersTimeout = env.EDGE_HEADERS_TIMEOUT_MS;
}

main().catch(exitOnBootFailure('edge'));
