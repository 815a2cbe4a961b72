import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { dialectForPath, renderError, requestTooLarge, toAppError, type AppError } from '@modelgate/errors';
import {
  accessLog,
  answerBeforeBody,
  clientAddress,
  declaresBodyOver,
  describeError,
  REQUEST_ID_HEADER,
  resolveRequestId,
  type ProxyTrust,
} from '@modelgate/http';
import { redactUrl, type Logger } from '@modelgate/logger';
import { injectTraceHeaders, startServerSpan, tracingEnabled } from '@modelgate/telemetry';
import type { Request, Response } from 'express';
import { createProxyMiddleware, type Plugin, type RequestHandler } from 'http-proxy-middleware';
import type { CorsPolicy } from '../cors/cors';
import type { EdgeMetrics } from '../metrics/metrics';
import { classifyProxyFailure, RequestBodyTooLargeError, UpstreamTimeoutError } from './proxy-failures';
import { upstreamOf, type RouteFamily, type Upstream, type UpstreamName } from './upstreams';

/** A proxied request: plain Node objects, never Express ones (see `EdgeProxy`). */
type ProxiedRequest = IncomingMessage & { url: string; requestId: string };

export interface EdgeProxyOptions {
  upstreams: Record<UpstreamName, Upstream>;
  maxBodyMb: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** TRUSTED_PROXIES: reverse proxies in front whose X-Forwarded-* headers are believed. */
  trustProxy: ProxyTrust;
  logger: Logger;
  metrics: EdgeMetrics;
  cors: CorsPolicy;
}

/**
 * `/v1`, `/v1beta` -> relay, `/api` -> account and every other path but the edge's probes -> console: paths, headers and bodies untouched and streamed
 * both ways, errors answered in the caller's dialect.
 *
 * It works on plain `http` objects so the hot path skips Express: Express re-prototypes every
 * req/res, which measured here halves proxy throughput.
 */
export interface EdgeProxy {
  /** Proxies the request and returns true, or returns false for a path the edge answers itself. */
  handleIfProxied(req: IncomingMessage, res: ServerResponse, family: RouteFamily): boolean;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Error body in the caller's dialect; a 413's unread body is drained before the connection closes. */
function answerWithError(res: ServerResponse, req: ProxiedRequest, error: AppError): void {
  res.setHeader('X-Request-Id', req.requestId);
  const rendered = renderError(error, dialectForPath(pathOf(req.url)), req.requestId);
  if (rendered.status === 413) {
    answerBeforeBody(req, res, rendered);
    return;
  }
  const payload = JSON.stringify(rendered.body);
  res.writeHead(rendered.status, {
    ...rendered.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** The port a Host header names, as the proxy's own X-Forwarded-Port would read it. */
const HOST_PORT = /:(\d+)/;

/**
 * Headers the services rely on: the request id, the client address in X-Forwarded-For (one value
 * the relay can use for IP allow-lists; a client-sent one is never passed on as is), and
 * X-Forwarded-Host, -Proto and -Port (set here rather than by the proxy's `xfwd`, which builds
 * them anew with computed header names on every call).
 */
function setForwardingHeaders(req: ProxiedRequest, options: EdgeProxyOptions): void {
  const headers = req.headers;
  headers[REQUEST_ID_HEADER] = req.requestId;
  // The TCP peer, or, when it is a trusted proxy, what the proxies in front say the client was
  // (X-Forwarded-For is read only then: by default no peer is trusted).
  const peer = req.socket.remoteAddress;
  const peerTrusted = peer !== undefined && options.trustProxy(peer, 0);
  const clientIp = peerTrusted ? clientAddress(req, options.trustProxy) : peer;
  // Deletes only where the header is there: deleting a property costs even when it is absent.
  if (clientIp) headers['x-forwarded-for'] = clientIp;
  else if (headers['x-forwarded-for'] !== undefined) delete headers['x-forwarded-for'];
  // What a trusted proxy in front says, else the connection's own, never what a client claims.
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const host = headers.host;
  if (!peerTrusted || !headers['x-forwarded-host']) headers['x-forwarded-host'] = host ?? '';
  if (!peerTrusted || !headers['x-forwarded-proto']) headers['x-forwarded-proto'] = encrypted ? 'https' : 'http';
  if (!peerTrusted || !headers['x-forwarded-port']) {
    headers['x-forwarded-port'] = (host ? HOST_PORT.exec(host)?.[1] : undefined) ?? (encrypted ? '443' : '80');
  }
  // The edge's server already answered `100 Continue`; forwarding Expect would make the upstream
  // request wait for a second one (and hides it from the proxyReq hook).
  if (headers.expect !== undefined) delete headers.expect;
}

/** Aborts the upstream request once a chunked body (no Content-Length) grows past the limit. */
function limitStreamedBody(req: IncomingMessage, proxyReq: ClientRequest, maxBytes: number): void {
  let received = 0;
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received > maxBytes) {
      req.removeListener('data', count);
      req.unpipe();
      proxyReq.destroy(new RequestBodyTooLargeError());
    }
  };
  // Registered in the same tick the proxy pipes the body, so no chunk passes uncounted.
  req.on('data', count);
}

/** Shared by every request (node calls it on the request): no closure per call. */
function abortIdle(this: ClientRequest): void {
  this.destroy(new UpstreamTimeoutError('idle'));
}

/** Connect and idle deadlines for one upstream request. */
function applyTimeouts(proxyReq: ClientRequest, connectTimeoutMs: number, idleTimeoutMs: number): void {
  const socket = proxyReq.socket;
  if (socket?.connecting) {
    const timer = setTimeout(() => proxyReq.destroy(new UpstreamTimeoutError('connect')), connectTimeoutMs);
    const clear = () => clearTimeout(timer);
    socket.once('connect', clear);
    proxyReq.once('close', clear);
  }
  // Socket inactivity once connected: covers a service that accepts but never answers, and a
  // stream that stalls; a slow but live stream keeps resetting it.
  proxyReq.setTimeout(idleTimeoutMs, abortIdle);
}

/** Hooks into the proxy's events for one upstream: deadlines, body limit, headers, errors, metrics. */
function edgePlugin(upstream: Upstream, options: EdgeProxyOptions): Plugin<ProxiedRequest, ServerResponse> {
  const maxBytes = options.maxBodyMb * 1024 * 1024;
  return (proxyServer) => {
    proxyServer.on('proxyReq', (proxyReq, req) => {
      applyTimeouts(proxyReq, options.connectTimeoutMs, options.idleTimeoutMs);
      if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] !== undefined) {
        limitStreamedBody(req, proxyReq, maxBytes);
      }
    });

    proxyServer.on('proxyRes', (proxyRes, req) => {
      const headers = proxyRes.headers;
      // Hop-by-hop: the edge keeps its own keep-alive with the client, whatever the service does.
      // Undefined rather than deleted (which turns the object into a slow dictionary): the proxy
      // copies no undefined header, and fills Connection in for the client.
      headers.connection = undefined;
      headers['keep-alive'] = undefined;
      headers[REQUEST_ID_HEADER] = req.requestId;
      options.metrics.countResponse(upstream.name, proxyRes.statusCode ?? 502);
    });

    proxyServer.on('error', (err, req, res) => {
      // Without a response object (a WebSocket upgrade, which the edge does not proxy) no one can be told.
      if (!req || !res || !('writeHead' in res)) return;
      if (res.headersSent || res.destroyed) {
        // Mid-response, or the client left: nothing can be said any more; cutting the connection
        // shows the client a truncated stream rather than a clean end.
        res.destroy();
        return;
      }
      const failure = classifyProxyFailure(err, options.maxBodyMb);
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
      answerWithError(res, req, failure.error);
    });
  };
}

export function createEdgeProxy(options: EdgeProxyOptions): EdgeProxy {
  const maxBytes = options.maxBodyMb * 1024 * 1024;
  const proxies = new Map<UpstreamName, RequestHandler<ProxiedRequest, ServerResponse>>(
    Object.values(options.upstreams).map((upstream) => [
      upstream.name,
      createProxyMiddleware<ProxiedRequest, ServerResponse>({
        target: upstream.target,
        agent: upstream.agent,
        // The defaults log every exchange at info and answer errors with an HTML page.
        ejectPlugins: true,
        plugins: [edgePlugin(upstream, options)],
      }),
    ]),
  );
  // Access lines cost on every request: only when debugging.
  const logAccess = options.logger.isLevelEnabled('debug') ? accessLog(options.logger) : undefined;

  return {
    handleIfProxied(incoming, res, family) {
      const req = incoming as ProxiedRequest;
      const name = upstreamOf(family);
      if (name === undefined) return false;
      // X-Request-Id is set on the answers the edge gives itself (preflights, errors); a proxied
      // answer gets it with the service's headers (the proxyRes hook), not twice.
      req.requestId = resolveRequestId(req.headers[REQUEST_ID_HEADER]);
      // Off: this one check. On: the span continues the client's traceparent, and replaces it on the way in.
      const span = tracingEnabled() ? startServerSpan(req, res, req.requestId) : undefined;
      logAccess?.(Object.assign(req, { originalUrl: req.url }) as unknown as Request, res as Response, () => {});
      // Only browsers send Origin: SDK calls from servers skip CORS entirely. The console's pages and
      // files are loaded by the console itself, same-origin: they get no CORS headers.
      const origin = req.headers.origin;
      if (origin !== undefined && name !== 'console') {
        res.setHeader('X-Request-Id', req.requestId);
        if (options.cors.handle(req, res, name, origin)) return true;
      }

      if (declaresBodyOver(req, maxBytes)) {
        options.metrics.countFailure(name, 'too_large');
        answerWithError(res, req, requestTooLarge(options.maxBodyMb));
        return true;
      }
      setForwardingHeaders(req, options);
      if (span) injectTraceHeaders(span, req.headers);
      void proxies.get(name)!(req, res, (err?: unknown) => {
        // Only reached if the proxy fails before its error hook could answer.
        if (!res.headersSent) answerWithError(res, req, toAppError(err));
      });
      return true;
    },
  };
}
