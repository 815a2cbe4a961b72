import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, dialectForPath, type ErrorResponse, renderError } from '@modelgate/errors';

/**
 * Answers given before the request was read in full (a body over the limit, a request line or
 * headers Node refused), without cutting the client off while it is still sending.
 *
 * Closing a socket with unread bytes, or while bytes are still arriving, makes the kernel reset the
 * connection: a client still writing then sees EPIPE or ECONNRESET instead of the answer already
 * sent. So the answer goes out at once with `Connection: close`, the rest of what the client sends
 * is read and discarded, and the connection closes when the client is done, or when these bounds
 * pass (an endless or crawling body is cut off).
 */
export interface DrainBounds {
  /** Bytes read and discarded after the answer before the connection is cut. */
  maxBytes: number;
  /** Time after the answer before the connection is cut. */
  maxMs: number;
}

/** Generous enough for a client that overshot the limit to finish its upload at LAN speeds. */
export const UNREAD_BODY_DRAIN: DrainBounds = { maxBytes: 64 * 1024 * 1024, maxMs: 10_000 };

/** True when the request declares a body longer than `maxBytes`: it can be refused before any byte is read. */
export function declaresBodyOver(req: IncomingMessage, maxBytes: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > maxBytes;
}

function errorPayload(rendered: ErrorResponse): { payload: string; headers: Record<string, string | number> } {
  const payload = JSON.stringify(rendered.body);
  return {
    payload,
    headers: {
      ...rendered.headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(payload),
      Connection: 'close',
    },
  };
}

/**
 * Sends an error (a 413) for a request whose body will not be used, then reads and discards the
 * body within `bounds` before the connection closes (see `DrainBounds`).
 */
export function answerBeforeBody(
  req: IncomingMessage,
  res: ServerResponse,
  rendered: ErrorResponse,
  bounds: DrainBounds = UNREAD_BODY_DRAIN,
): void {
  const { payload, headers } = errorPayload(rendered);
  res.writeHead(rendered.status, headers);
  if (req.complete) {
    res.end(payload);
    return;
  }
  // The whole answer goes out now (its length is declared), but the response ends only once the
  // body is read: ending it makes Node close the socket.
  res.write(payload);
  let discarded = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off('data', discard);
    req.off('end', finish);
    res.off('close', stop);
  };
  const finish = () => {
    stop();
    res.end();
  };
  const cut = () => {
    stop();
    res.destroy();
  };
  const discard = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bounds.maxBytes) cut();
  };
  // The connection keeps the process alive while it lasts; the deadline alone must not.
  const timer = setTimeout(cut, bounds.maxMs).unref();
  req.on('data', discard);
  req.once('end', finish);
  res.once('close', stop);
  req.resume();
}

type ClientError = Error & { code?: string; rawPacket?: Buffer };

/** What Node refuses before a request object exists, as docs/api.md 1.3 (Early answers) names it. */
function appErrorFor(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('request_header_too_large', 'request line and headers are too large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('request_too_large', 'chunk extensions are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'request not received in time');
    default:
      return new AppError('invalid_request', 'malformed HTTP request');
  }
}

/** `METHOD /path` at the start of the bytes: the path (without query), which decides the dialect. */
const REQUEST_LINE_PATH = /^[A-Z]{3,10} (\/[^ ?#]*)/;

/**
 * The path the refused bytes were sent to: the request in flight on the connection (a body that
 * failed to parse), else the request line at the start of the bytes Node received last. A request
 * line split across several reads is not in them: the `/api` envelope answers then.
 */
function refusedPath(err: ClientError, inFlight: ServerResponse | undefined): string {
  const url = inFlight?.req.url;
  if (url !== undefined) {
    const query = url.indexOf('?');
    return query === -1 ? url : url.slice(0, query);
  }
  const start = err.rawPacket?.toString('latin1', 0, 256) ?? '';
  return REQUEST_LINE_PATH.exec(start)?.[1] ?? '';
}

/**
 * `clientError` handler of every service's server: what Node's parser refuses (an oversized request
 * line or headers: 431; a request not received in time: 408; malformed HTTP: 400) is answered with
 * a JSON error in the caller's dialect and `Connection: close` (Node's own answer has no body); the
 * connection closes once the client stops sending, or after `UNREAD_BODY_DRAIN.maxMs`.
 */
export function answerClientError(err: ClientError, socket: Duplex): void {
  // Already answered: what still arrives is discarded until the client or the deadline closes.
  if (socket.writableEnded) return;
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
  // A reset connection cannot be told anything, nor can one whose response has started.
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const rendered = renderError(appErrorFor(err.code), dialectForPath(refusedPath(err, inFlight)), requestId);
  const { payload, headers } = errorPayload(rendered);
  const head = Object.entries({ ...headers, 'X-Request-Id': requestId }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status]}\r\n${head.join('')}\r\n${payload}`);
  const timer = setTimeout(() => socket.destroy(), UNREAD_BODY_DRAIN.maxMs).unref();
  socket.once('close', () => clearTimeout(timer));
}
