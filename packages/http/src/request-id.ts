import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requestId()`: the caller's `X-Request-Id` when well-formed, else a new UUID. */
      requestId: string;
    }
  }
}

/** Accepts a well-formed incoming id (the edge sets one) so one id follows a request everywhere. */
export function resolveRequestId(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && VALID_REQUEST_ID.test(value) ? value : randomUUID();
}

/** A middleware on node's objects: Express runs it, and so can a handler that serves a request without Express. */
export function requestId() {
  return (req: IncomingMessage & { requestId?: string }, res: ServerResponse, next: () => void): void => {
    req.requestId = resolveRequestId(req.headers[REQUEST_ID_HEADER]);
    res.setHeader('X-Request-Id', req.requestId);
    next();
  };
}
