import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { dialectForPath } from '@modelgate/errors';
import { pingDatabase, type PrismaClient } from '@modelgate/db';
import type { Logger } from '@modelgate/logger';
import { accessLog, directRoutes, errorHandler, healthRouter, notFound, requestId, trustProxiesIn, type ServiceMetrics, withFastPath } from '@modelgate/http';
import type { IpAllowList } from '@modelgate/schemas';
import { traceRequests, tracingEnabled } from '@modelgate/telemetry';
import express, { type NextFunction } from 'express';
import type { RedisClient } from '@modelgate/queue/connections';
import { channelTestRouter } from './features/channel-test/router';
import type { ChannelTester } from './features/channel-test/service';
import type { ChannelCache } from './features/channels/channel-cache';
import { chatCompletionsRoute } from './endpoints/chat-completions/router';
import { responsesRoute } from './endpoints/responses/router';
import { embeddingsRoute } from './endpoints/embeddings/router';
import { imageEditsRoute, imageGenerationsRoute } from './endpoints/images/router';
import { speechRoute, transcriptionsRoute, translationsRoute } from './endpoints/audio/router';
import { moderationsRoute } from './endpoints/moderations/router';
import { rerankRoute } from './endpoints/rerank/router';
import { completionsRoute } from './endpoints/completions/router';
import { geminiRoute } from './endpoints/gemini/router';
import { countTokensRoute, messagesRoute } from './endpoints/messages/router';
import { authContextOf, type AuthContext, type WithLocals } from './features/keys/authenticate';
import type { KeyFailureLimit } from './features/keys/failure-limit';
import type { KeyCache } from './features/keys/key-cache';
import { modelsRouter } from './features/models/router';
import { ClientGone, type RelayService } from './features/relay/service';
import { relayedUpstreamAnswer, sendUpstreamError } from './features/relay/upstream-errors';

export interface RelayDeps {
  logger: Logger;
  prisma: PrismaClient;
  redis: RedisClient;
  keys: KeyCache;
  /** Failed key checks per client address (RELAY_KEY_FAILURES_PER_MINUTE). */
  keyFailures: KeyFailureLimit;
  channels: ChannelCache;
  relay: RelayService;
  /** HTTP series; the relay's own are registered on the same registry. */
  metrics: ServiceMetrics;
  maxBodyMb: number;
  /** TRUSTED_PROXIES: the only peers whose X-Forwarded-For names the client (key IP allow-lists). */
  trustedProxies: IpAllowList;
  channelTester: ChannelTester;
  /** The bearer token of the internal API (internalApiToken). */
  internalToken: string;
}

/** What the per-request middlewares and the error answers read: an Express request, or a direct route's. */
interface ServedRequest extends IncomingMessage {
  method: string;
  requestId: string;
  originalUrl: string;
  path: string;
}

type ServedResponse = ServerResponse & WithLocals;

type PerRequestMiddleware = (req: ServedRequest, res: ServedResponse, next: (err?: unknown) => void) => void;

const dialectOf = (req: ServedRequest) => dialectForPath(req.path);

/** The key's owner once the key was accepted, and the channel that served the call. */
function callContextOf(_req: ServedRequest, res: ServedResponse): Record<string, unknown> | undefined {
  const auth = authContextOf(res) as AuthContext | undefined;
  return auth && { userId: auth.user.id, channelId: res.locals.channelId as number | undefined };
}

/** Upstream answers relayed as they are, vanished clients left alone, the rest in the route's dialect. */
function relayErrors(logger: Logger) {
  const fallback = errorHandler<ServedRequest, ServedResponse>(logger, dialectOf, { context: callContextOf });
  // Four parameters: Express tells error handlers by their arity (direct routes pass three).
  return (err: unknown, req: ServedRequest, res: ServedResponse, _next?: NextFunction): void => {
    if (err instanceof ClientGone) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    const dialect = dialectOf(req);
    const relayed = relayedUpstreamAnswer(err, dialect);
    if (relayed) {
      sendUpstreamError(res, relayed, dialect === 'envelope' ? 'openai' : dialect, req.requestId);
      return;
    }
    fallback(err, req, res);
  };
}

/** The relay's request listener: the relayed calls served directly, everything else by an Express app. */
export function createRelayApp(deps: RelayDeps): RequestListener {
  const trust = trustProxiesIn(deps.trustedProxies);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The edge sets X-Forwarded-For to the client's address; believed from the edge only.
  app.set('trust proxy', trust);
  const perRequest: PerRequestMiddleware[] = [requestId(), deps.metrics.middleware];
  // A server span per request (continuing the edge's traceparent), the parent of the call's spans.
  if (tracingEnabled()) perRequest.push(traceRequests());
  // One line per request costs throughput: only when debugging (failures have their own lines).
  if (deps.logger.isLevelEnabled('debug')) perRequest.push(accessLog(deps.logger, { context: callContextOf }));
  const errors = relayErrors(deps.logger);
  app.use(...perRequest);
  // Every call reserves in Redis; no call reads PostgreSQL (caches and the ledger queue ride out its outage).
  app.use(healthRouter({ required: { redis: () => deps.redis.ping() }, reported: { database: () => pingDatabase(deps.prisma) } }));
  app.get('/metrics', deps.metrics.handler);
  app.use(channelTestRouter(deps.channelTester, deps.internalToken));
  app.use(modelsRouter(deps.keys, deps.keyFailures, deps.channels));
  app.use(notFound(dialectOf));
  app.use(errors);
  // The relayed calls (the hot path) bypass Express; everything else is an ordinary Express app.
  return withFastPath(app, directRoutes({
    trust,
    perRequest,
    routes: [
      completionsRoute(deps),
      chatCompletionsRoute(deps),
      responsesRoute(deps),
      embeddingsRoute(deps),
      imageGenerationsRoute(deps),
      imageEditsRoute(deps),
      speechRoute(deps),
      transcriptionsRoute(deps),
      translationsRoute(deps),
      moderationsRoute(deps),
      rerankRoute(deps),
      geminiRoute(deps),
      messagesRoute(deps),
      countTokensRoute(deps),
    ],
    onError: errors,
  }));
}
