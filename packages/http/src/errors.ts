import { AppError, type ErrorDialect, renderError, toAppError } from '@modelgate/errors';
import type { Logger } from '@modelgate/logger';
import type { NextFunction, Request, Response } from 'express';
import { answerBeforeBody } from './early-answers';

/** What may be logged about an error: its kind and first line, never a stack, query text or payload. */
export function describeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { type: typeof err };
  const code = (err as { code?: unknown }).code;
  const [firstLine = ''] = err.message.split('\n', 1);
  return {
    type: err.name,
    code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    message: firstLine.slice(0, 200),
  };
}

export function sendError(res: Response, err: AppError, dialect: ErrorDialect, requestId: string): void {
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
  res.status(rendered.status).set(rendered.headers).json(rendered.body);
}

export interface ErrorHandlerOptions {
  /** Who the failed request concerned, when the service knows (e.g. `userId`), for its log line. */
  context?: (req: Request, res: Response) => Record<string, unknown> | undefined;
}

/** Final Express error handler: maps anything thrown to the dialect of the route. */
export function errorHandler(
  logger: Logger,
  dialect: ErrorDialect | ((req: Request) => ErrorDialect),
  options: ErrorHandlerOptions = {},
) {
  const { context } = options;
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
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
