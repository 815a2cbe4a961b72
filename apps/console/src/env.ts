import { basename, resolve } from 'node:path';
import { commonEnvShape, env, loadEnvOrExit, z, type EnvSource } from '@modelgate/config';

/**
 * Where `vite build` puts the app: dist/web beside the bundle (dist/index.js), or ../dist/web when the
 * sources run under tsx (src/index.ts, as in `pnpm dev` and the browser tests).
 */
const DEFAULT_WEB_DIR = resolve(__dirname, basename(__dirname) === 'src' ? '../dist/web' : 'web');

export const consoleEnvSchema = z.object({
  ...commonEnvShape,
  CONSOLE_PORT: env.port(3004),
  /** The built single-page app (index.html and assets/). */
  CONSOLE_WEB_DIR: z.string().default(DEFAULT_WEB_DIR).transform((dir) => resolve(dir)),
});

export type ConsoleEnv = z.output<typeof consoleEnvSchema>;

export function loadConsoleEnv(source: EnvSource = process.env): ConsoleEnv {
  return loadEnvOrExit('console', consoleEnvSchema, source);
}
