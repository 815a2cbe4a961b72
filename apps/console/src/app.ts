import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@modelgate/errors';
import { errorHandler, healthRouter, notFound, requestId } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { ConsoleEnv } from './env';

export type ConsoleConfig = Pick<ConsoleEnv, 'CONSOLE_WEB_DIR'>;

export interface ConsoleDeps {
  logger: Logger;
}

/** index.html names the current assets: browsers revalidate it (ETag) on every load. */
const REVALIDATE = 'no-cache';

/**
 * The app loads only its own scripts; inline styles are needed by React's style props, Recharts and
 * the API reference page (Scalar), whose icons and fonts come as data: URLs.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Frame-Options', 'DENY');
  next();
}

/**
 * The console's static server: the built single-page app with its cache rules, index.html for every
 * other GET (the app's own routes), /healthz and /readyz. It sits behind the edge, which keeps /v1,
 * /v1beta and /api for the other services.
 */
export function buildApp(config: ConsoleConfig, deps: ConsoleDeps): Express {
  const webDir = config.CONSOLE_WEB_DIR;
  const indexFile = join(webDir, 'index.html');
  const app = express();
  app.disable('x-powered-by');
  app.use(securityHeaders);
  app.use(requestId());
  app.use(healthRouter({ required: { web: () => access(indexFile, constants.R_OK) } }, { detailed: false }));
  // Vite's hashed names change with their content, so an asset is cached for a year
  // (`public, max-age=31536000, immutable`). A missing one is a 404, never index.html: a stale page
  // asking for an old chunk must fail as such, and no browser may cache HTML under a script's name.
  app.use('/assets', express.static(join(webDir, 'assets'), { index: false, redirect: false, immutable: true, maxAge: '365d' }));
  app.use('/assets', notFound('envelope'));
  app.use(
    express.static(webDir, {
      index: false,
      redirect: false,
      cacheControl: false,
      setHeaders: (res) => res.setHeader('Cache-Control', REVALIDATE),
    }),
  );
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.sendFile(indexFile, { headers: { 'Cache-Control': REVALIDATE } }, (err?: Error & { code?: string }) => {
      if (!err) return;
      next(err.code === 'ENOENT' ? new AppError('service_unavailable', 'the console is not built (run pnpm build)') : err);
    });
  });
  app.use(notFound('envelope'));
  app.use(errorHandler(deps.logger, 'envelope'));
  return app;
}
