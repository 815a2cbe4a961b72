import { AppError } from '@modelgate/errors';
import express, { type RequestHandler } from 'express';

/**
 * JSON bodies up to MAX_REQUEST_BODY_MB, with parse failures in the `/api` dialect:
 * malformed JSON is a 400 `invalid_request`, an oversized body a 413.
 */
export function jsonBody(maxMegabytes: number): RequestHandler {
  const parse = express.json({ limit: `${maxMegabytes}mb` });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') return next(new AppError('request_too_large', `body larger than ${maxMegabytes} MB`));
      next(new AppError('invalid_request', 'body: not valid JSON', { param: 'body' }));
    });
  };
}
