import { AppError, requestTooLarge } from '@modelgate/errors';
import { declaresBodyOver } from '@modelgate/http';
import express, { type RequestHandler } from 'express';

/**
 * JSON bodies up to MAX_REQUEST_BODY_MB, with parse failures in the `/api` dialect:
 * malformed JSON is a 400 `invalid_request`, an oversized body a 413 (refused unread when its
 * declared length is over the limit; the error answer drains it within bounds, see `sendError`).
 */
export function jsonBody(maxMegabytes: number): RequestHandler {
  const maxBytes = maxMegabytes * 1024 * 1024;
  const parse = express.json({ limit: maxBytes });
  return (req, res, next) => {
    if (declaresBodyOver(req, maxBytes)) return next(requestTooLarge(maxMegabytes));
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') return next(requestTooLarge(maxMegabytes));
      next(new AppError('invalid_request', 'body: not valid JSON', { param: 'body' }));
    });
  };
}
