import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AppError, requestTooLarge } from '@modelgate/errors';
import { declaresBodyOver } from '@modelgate/http';
import express from 'express';

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads the body as bytes (after the key check), up to MAX_REQUEST_BODY_MB: the relay parses it
 * once itself and, where docs/api.md says so (2.3), forwards these exact bytes. A declared length over
 * the limit is refused unread (the error answer drains the body within bounds, see `sendError`).
 */
export function rawBody(maxBodyMb: number): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  const maxBytes = maxBodyMb * 1024 * 1024;
  const read = express.raw({ type: () => true, limit: maxBytes });
  return (req, res, next) => {
    if (declaresBodyOver(req, maxBytes)) {
      next(requestTooLarge(maxBodyMb));
      return;
    }
    read(req, res, next);
  };
}

/** The raw body of a JSON request; 400 `invalid_json` for another content type or no body. */
export function jsonBytes(req: { headers: IncomingHttpHeaders; body?: unknown }): Buffer {
  if (!JSON_CONTENT_TYPE.test(req.headers['content-type'] ?? '')) {
    throw new AppError('invalid_json', 'request body must be JSON (Content-Type: application/json)');
  }
  const body: unknown = req.body;
  if (!Buffer.isBuffer(body) || body.length === 0) throw new AppError('invalid_json', 'request body is empty');
  return body;
}
