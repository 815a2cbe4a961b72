import { redactUrl, type Logger } from '@modelgate/logger';
import type { NextFunction, Request, Response } from 'express';

/** One line per finished request: method, redacted path, status, latency and request id. */
export function accessLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const status = res.statusCode;
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level]({
        requestId: req.requestId,
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
