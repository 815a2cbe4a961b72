import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, type ErrorDialect, renderError, toAppError } from '@modelgate/errors';
import type { Logger } from '@modelgate/logger';
import type { NextFunction, Request, Response } from 'express';
import { answerBeforeBody } from './early-answers';

/** Prisma opens its messages with an empty line and a code frame of the failed call, and ends them with the reason. */
const PRISMA_INVOCATION = /^Invalid `.+` invocation/;

function errorCode(err: Error): string | number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? code : undefined;
}

/**
 * One line saying what went wrong: the message's first line, or the reason line of a Prisma message
 * (whose first line is empty). An error without any message is named by its type and code.
 */
export function errorSummary(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const lines = err.message.split('\n').map((line) => line.trim()).filter(Boolean);
  const summary = PRISMA_INVOCATION.test(lines[0] ?? '') ? lines[lines.length - 1] : lines[0];
  const code = errorCode(err);
  return summary ?? (code === undefined ? err.name : `${err.name} ${code}`);
}

/** What may be logged about an error: its kind and one line, never a stack, query text or payload. */
export function describeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { type: typeof err };
  return { type: err.name, code: errorCode(err), message: errorSummary(err).slice(0, 200) };
}

/**
 * A JSON answer on node's response: the status, headers and body Express's `res.json` writes (with
 * ETag generation off), for handlers with or without Express.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}

export function sendError(res: ServerResponse, err: AppError, dialect: ErrorDialect, requestId: string): void {
  const rendered = renderError(err, dialect, requestId);
  if (res.headersSent) {
    res.end();
    return;
  }
  // A body refused unread (a declared length over the limit) is drained before the connection closes.
  if (rendered.status === 413 && !res.req.complete) {
    answerBeforeBody(res.req, res, rendered);
    return;
  }
  sendJson(res, rendered.status, rendered.body, rendered.headers);
}

export interface ErrorHandlerOptions<Req = Request, Res = Response> {
  /** Who the failed request concerned, when the service knows (e.g. `userId`), for its log line. */
  context?: (req: Req, res: Res) => Record<string, unknown> | undefined;
}

/**
 * Final error handler: maps anything thrown to the dialect of the route. It works on node's objects
 * (Express's by default): a handler that bypasses Express calls it with three arguments.
 */
export function errorHandler<Req extends IncomingMessage & { requestId?: string } = Request, Res extends ServerResponse = Response>(
  logger: Logger,
  dialect: ErrorDialect | ((req: Req) => ErrorDialect),
  options: ErrorHandlerOptions<Req, Res> = {},
) {
  const { context } = options;
  // Four parameters: Express tells error handlers by their arity.
  return (err: unknown, req: Req, res: Res, _next?: NextFunction): void => {
    const appError = toAppError(err);
    if (appError.status >= 500) {
      logger.error(
        { requestId: req.requestId, ...context?.(req, res), error: describeError(appError.cause ?? err), code: appError.code },
        'request failed',
      );
    }
    sendError(res, appError, typeof dialect === 'function' ? dialect(req) : dialect, req.requestId ?? '');
  };
}

export function notFound(dialect: ErrorDialect | ((req: Request) => ErrorDialect)) {
  return (req: Request, res: Response) => {
    const err = new AppError('not_found', `no route for ${req.method} ${req.path}`);
    sendError(res, err, typeof dialect === 'function' ? dialect(req) : dialect, req.requestId ?? '');
  };
}
