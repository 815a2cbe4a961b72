import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { dialectForPath, renderError, type AppError } from '@modelgate/errors';
import { accessLog, describeError, REQUEST_ID_HEADER, resolveRequestId } from '@modelgate/http';
import { redactUrl, type Logger } from '@modelgate/logger';
import type { Request, Response } from 'express';
import type { Dispatcher } from 'undici';
import type { EdgeMetrics } from '../metrics/metrics';
import {
  classifyProxyFailure,
  RequestBodyTooLargeError,
  requestTooLarge,
  UpstreamTimeoutError,
} from './proxy-failures';
import { upstreamNameFor, type Upstream, type UpstreamName } from './upstreams';

/** A proxied request: plain Node objects, never Express ones (see `EdgeProxy`). */
type ProxiedRequest = IncomingMessage & { url: string; method: string; requestId: string };

export interface EdgeProxyOptions {
  upstreams: Record<UpstreamName, Upstream>;
  maxBodyMb: number;
  /** Silence allowed while waiting for the service's answer and between its body chunks. */
  idleTimeoutMs: number;
  /** Address to send as X-Forwarded-For: the TCP peer, or what trusted proxies in front say. */
  clientIp(req: IncomingMessage): string | undefined;
  /** True when a reverse proxy in front sets X-Forwarded-Proto/Host/Port that can be believed. */
  trustForwardedHeaders: boolean;
  logger: Logger;
  metrics: EdgeMetrics;
}

/**
 * `/v1`, `/v1beta` -> relay and `/api` -> account: paths, headers and bodies untouched and streamed
 * both ways, errors answered in the caller's dialect.
 *
 * It works on plain `http` objects so the hot path skips Express: Express re-prototypes every
 * req/res, which measured here halves proxy throughput. The services are reached through undici's
 * keep-alive pools with a dispatch handler that writes straight to the client's response: a
 * general-purpose proxy library (http-proxy-middleware, node's http client) cost the edge about
 * twice the CPU per request.
 */
export interface EdgeProxy {
  /** Proxies the request and returns true, or returns false for a path the edge answers itself. */
  handleIfProxied(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * Bodies up to this size (with a Content-Length) are read whole and sent with the request in one
 * write; larger and chunked ones are streamed.
 */
const BUFFERED_BODY_MAX_BYTES = 64 * 1024;

/** Hop-by-hop headers (RFC 9110 7.6.1): they describe one connection, never the next one. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Error body in the caller's dialect; `closeConnection` when the client's body will not be read. */
function answerWithError(res: ServerResponse, req: ProxiedRequest, error: AppError, closeConnection: boolean): void {
  const rendered = renderError(error, dialectForPath(pathOf(req.url)), req.requestId);
  const payload = JSON.stringify(rendered.body);
  res.writeHead(rendered.status, {
    ...rendered.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    ...(closeConnection ? { Connection: 'close' } : {}),
  });
  res.end(payload);
}

/** Headers named in `Connection` are hop-by-hop too. */
function connectionTokens(headers: IncomingHttpHeaders): Set<string> | undefined {
  const connection = headers.connection;
  if (!connection) return undefined;
  return new Set(connection.split(',').map((token) => token.trim().toLowerCase()));
}

/**
 * The headers the service gets: the client's, minus hop-by-hop ones and `Expect` (the edge's server
 * already answered `100 Continue`), plus the request id and the X-Forwarded-* set: the client
 * address in X-Forwarded-For (one value the relay can use for IP allow-lists; a client-sent one is
 * never passed on as is) and, unless a trusted proxy in front set them, the proto, host and port of
 * the connection to the edge.
 */
function forwardedHeaders(req: ProxiedRequest, options: EdgeProxyOptions): Record<string, string | string[]> {
  const incoming = req.headers;
  const named = connectionTokens(incoming);
  const headers: Record<string, string | string[]> = {};
  for (const key in incoming) {
    const value = incoming[key];
    if (value === undefined || HOP_BY_HOP.has(key) || key === 'expect' || named?.has(key)) continue;
    headers[key] = value;
  }
  headers[REQUEST_ID_HEADER] = req.requestId;
  const clientIp = options.clientIp(req);
  if (clientIp) headers['x-forwarded-for'] = clientIp;
  else delete headers['x-forwarded-for'];
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  if (!options.trustForwardedHeaders) {
    delete headers['x-forwarded-host'];
    delete headers['x-forwarded-proto'];
    delete headers['x-forwarded-port'];
  }
  if (!headers['x-forwarded-for'] && req.socket.remoteAddress) headers['x-forwarded-for'] = req.socket.remoteAddress;
  headers['x-forwarded-port'] ||= /:(\d+)$/.exec(incoming.host ?? '')?.[1] ?? (encrypted ? '443' : '80');
  headers['x-forwarded-proto'] ||= encrypted ? 'https' : 'http';
  headers['x-forwarded-host'] ||= incoming.host ?? '';
  return headers;
}

/** undici's deadline errors, as the edge's own timeout kinds. */
function asProxyFailure(err: Error): Error {
  const code = (err as { code?: unknown }).code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new UpstreamTimeoutError('connect');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return new UpstreamTimeoutError('idle');
  return err;
}

/** The client left before the answer was complete: the service's request is dropped. */
class ClientGoneError extends Error {
  constructor() {
    super('client closed the connection');
    this.name = 'ClientGoneError';
  }
}

/** One proxied exchange: undici's callbacks write the service's answer to the client as it comes. */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private pendingAbort: Error | undefined;
  private answered = false;

  constructor(
    private readonly upstream: Upstream,
    private readonly req: ProxiedRequest,
    private readonly res: ServerResponse,
    private readonly options: EdgeProxyOptions,
  ) {
    res.on('drain', () => this.controller?.resume());
    res.on('close', () => {
      if (!res.writableFinished) this.abort(new ClientGoneError());
    });
  }

  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.pendingAbort = reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort) controller.abort(this.pendingAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    // Informational answers (the edge removed `Expect`, so there are none to relay).
    if (statusCode < 200) return;
    this.answered = true;
    this.options.metrics.countResponse(this.upstream.name, statusCode);
    const named = connectionTokens(headers);
    const outgoing: OutgoingHttpHeaders = {};
    for (const key in headers) {
      // undici has decoded a chunked body: the edge chooses its own framing and keep-alive.
      if (HOP_BY_HOP.has(key) || named?.has(key)) continue;
      outgoing[key] = headers[key];
    }
    outgoing[REQUEST_ID_HEADER] = this.req.requestId;
    if (this.res.destroyed) return;
    if (statusMessage) this.res.writeHead(statusCode, statusMessage, outgoing);
    else this.res.writeHead(statusCode, outgoing);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // A client that reads slowly slows the service's answer down instead of filling memory.
    if (!this.res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.res.end();
    // The service answered before reading the whole body (a rejection): discard the rest, so the
    // client can finish sending and read the answer on a connection that stays usable.
    if (!this.req.complete) {
      this.req.unpipe();
      this.req.resume();
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const { res, req, options, upstream } = this;
    if (err instanceof ClientGoneError) return;
    if (this.answered || res.headersSent || res.destroyed) {
      // Mid-response, or the client left: nothing can be said any more; cutting the connection
      // shows the client a truncated stream rather than a clean end.
      res.destroy();
      return;
    }
    const failure = classifyProxyFailure(asProxyFailure(err), options.maxBodyMb);
    options.metrics.countFailure(upstream.name, failure.reason);
    if (failure.reason !== 'too_large') {
      // Flat fields: the logger's `err` serializer and `*.code` redaction would mangle a nested error.
      const { type, code, message } = describeError(err);
      options.logger.error(
        {
          requestId: req.requestId,
          upstream: upstream.name,
          path: redactUrl(pathOf(req.url)),
          errorType: type,
          errorCode: code,
          errorMessage: message,
        },
        'upstream request failed',
      );
    }
    answerWithError(res, req, failure.error, failure.reason === 'too_large');
  }
}

/** A streamed body, counted: past `maxBytes` the service's request is aborted (413 to the client). */
function streamedBody(req: ProxiedRequest, exchange: Exchange, maxBytes: number | undefined): Readable {
  // undici destroys the stream it is given when it stops: an intermediate stream keeps that from
  // cutting the client's connection before it gets its answer.
  const body = new PassThrough();
  if (maxBytes !== undefined) {
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        req.removeListener('data', count);
        req.unpipe(body);
        exchange.abort(new RequestBodyTooLargeError());
      }
    };
    req.on('data', count);
  }
  req.pipe(body);
  return body;
}

export function createEdgeProxy(options: EdgeProxyOptions): EdgeProxy {
  const maxBytes = options.maxBodyMb * 1024 * 1024;
  // Access lines cost on every request: only when debugging.
  const logAccess = options.logger.isLevelEnabled('debug') ? accessLog(options.logger) : undefined;

  const dispatch = (upstream: Upstream, req: ProxiedRequest, exchange: Exchange, body: Dispatcher.DispatchOptions['body']) => {
    upstream.pool.dispatch(
      {
        path: upstream.pathFor(req.url),
        method: req.method as Dispatcher.HttpMethod,
        headers: forwardedHeaders(req, options),
        body,
        headersTimeout: options.idleTimeoutMs,
        bodyTimeout: options.idleTimeoutMs,
      },
      exchange,
    );
  };

  const forward = (upstream: Upstream, req: ProxiedRequest, res: ServerResponse) => {
    const exchange = new Exchange(upstream, req, res, options);
    const declaredLength = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && (declaredLength === undefined || declaredLength === '0')) {
      dispatch(upstream, req, exchange, declaredLength === '0' ? '' : null);
    } else if (!chunked && Number(declaredLength) <= BUFFERED_BODY_MAX_BYTES) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A client that leaves mid-body never gets an answer: there is nothing to send upstream.
      req.on('end', () => dispatch(upstream, req, exchange, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    } else {
      dispatch(upstream, req, exchange, streamedBody(req, exchange, chunked ? maxBytes : undefined));
    }
  };

  return {
    handleIfProxied(incoming, res) {
      const req = incoming as ProxiedRequest;
      const name = upstreamNameFor(req.url);
      if (name === undefined) return false;
      req.requestId = resolveRequestId(req.headers[REQUEST_ID_HEADER]);
      res.setHeader('X-Request-Id', req.requestId);
      logAccess?.(Object.assign(req, { originalUrl: req.url }) as unknown as Request, res as Response, () => {});

      const declaredLength = req.headers['content-length'];
      if (declaredLength !== undefined && Number(declaredLength) > maxBytes) {
        options.metrics.countFailure(name, 'too_large');
        answerWithError(res, req, requestTooLarge(options.maxBodyMb), true);
        return true;
      }
      forward(options.upstreams[name], req, res);
      return true;
    },
  };
}
