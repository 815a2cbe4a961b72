import type { IncomingMessage, ServerResponse } from 'node:http';
import { redactUrl, type Logger } from '@modelgate/logger';
import type { Request, Response } from 'express';

/** What an access line reads of a request: node's, with the request id and the URL as received. */
export interface LoggedRequest extends IncomingMessage {
  requestId: string;
  originalUrl: string;
}

export interface AccessLogOptions<Req extends LoggedRequest = Request, Res extends ServerResponse = Response> {
  /**
   * Who and what the request concerned, once the service knows (e.g. `userId`, `channelId`); read
   * when the line is written, after the response.
   */
  context?: (req: Req, res: Res) => Record<string, unknown> | undefined;
}

/**
 * One line per finished request: method, redacted path, status, latency, request id and context.
 * It works on node's objects: Express runs it, and so can a handler that bypasses Express.
 */
export function accessLog<Req extends LoggedRequest = Request, Res extends ServerResponse = Response>(
  logger: Logger,
  options: AccessLogOptions<Req, Res> = {},
) {
  const { context } = options;
  return (req: Req, res: Res, next: () => void): void => {
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
