import { redactUrl, type Logger } from '@modelgate/logger';
import type { NextFunction, Request, Response } from 'express';

export interface AccessLogOptions {
  /**
   * Who and what the request concerned, once the service knows (e.g. `userId`, `channelId`); read
   * when the line is written, after the response.
   */
  context?: (req: Request, res: Response) => Record<string, unknown> | undefined;
}

/** One line per finished request: method, redacted path, status, latency, request id and context. */
export function accessLog(logger: Logger, options: AccessLogOptions = {}) {
  const { context } = options;
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const status = res.statusCode;
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level]({
        requestId: req.requestId,
        ...context?.(req, res),
        method: req.method,
        path: redactUrl(req.originalUrl),
        status,
        latencyMs: Number(process.hrtime.bigint() - started) / 1e6,
        aborted: !res.writableFinished,
      }, 'request');
    });
    next();
  };
}
