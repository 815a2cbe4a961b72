import { exitOnBootFailure, runService } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { buildApp } from './app';
import { loadConsoleEnv } from './env';

async function main(): Promise<void> {
  const env = loadConsoleEnv();
  const logger = createLogger({ service: 'console', level: env.LOG_LEVEL });
  const app = buildApp(env, { logger });
  await runService(app, {
    name: 'console',
    logger,
    host: env.HOST,
    port: env.CONSOLE_PORT,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
  });
  logger.info({ webDir: env.CONSOLE_WEB_DIR }, 'console serving the built app');
}

main().catch(exitOnBootFailure('console'));
