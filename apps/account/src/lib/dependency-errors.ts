import { AppError, isAppError } from '@modelgate/errors';
import type { ErrorRequestHandler } from 'express';

const PRISMA_UNREACHABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);
const REDIS_UNAVAILABLE = /Connection is closed|Stream isn't writeable|Reached the max retries per request/;

/** PostgreSQL or Redis could not be reached (as opposed to a bug): CONTRACT 1.1 answers 503. */
export function isDependencyDown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (PRISMA_UNREACHABLE.has(code) || NETWORK_CODES.has(code))) return true;
  if (err.name === 'MaxRetriesPerRequestError' || REDIS_UNAVAILABLE.test(err.message)) return true;
  return err.cause !== undefined && err.cause !== err && isDependencyDown(err.cause);
}

/** Placed before the final error handler: turns "database / Redis unreachable" into a 503 envelope. */
export const dependencyErrors: ErrorRequestHandler = (err, _req, _res, next) => {
  if (!isAppError(err) && isDependencyDown(err)) {
    next(new AppError('service_unavailable', 'a backing service is unavailable, try again shortly', { cause: err }));
    return;
  }
  next(err);
};
