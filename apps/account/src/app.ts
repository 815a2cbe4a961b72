import express, { type Express, type Request } from 'express';
import { pingDatabase } from '@modelgate/db';
import { accessLog, errorHandler, healthRouter, notFound, requestId, trustProxiesIn } from '@modelgate/http';
import { traceRequests, tracingEnabled } from '@modelgate/telemetry';
import type { AccountDeps } from './deps';
import { createAuthRouter } from './features/auth/router';
import { createChannelRouter } from './features/channels/router';
import { createLogRouter } from './features/logs/router';
import { createNotificationRouter } from './features/notifications/router';
import { createOidcRouter } from './features/oidc/router';
import { createOpenApiRouter } from './features/openapi/router';
import { createOptionRouter } from './features/options/router';
import { createPasswordResetRouter } from './features/password-reset/router';
import { createPaymentRouter } from './features/payments/router';
import { createPricingRouter } from './features/pricing/router';
import { createRedemptionRouter } from './features/redemptions/router';
import { createStatusRouter } from './features/status/router';
import { createTokenRouter } from './features/tokens/router';
import { createTwoFactorRouter } from './features/two-factor/router';
import { createUsageRouter } from './features/usage/router';
import { createUserAdminRouter } from './features/users/admin-router';
import { createVerificationRouter } from './features/verification/router';
import { createSelfRouter } from './features/users/self-router';
import { jsonBody } from './lib/json-body';

/** The logged-in caller, once `requireUser` let the request through. */
const callerOf = (req: Request) => (req.user ? { userId: req.user.id } : undefined);

export function createAccountApp(deps: AccountDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // req.ip (per-address rate limits) is X-Forwarded-For only when the edge, a trusted proxy, sent it.
  app.set('trust proxy', trustProxiesIn(deps.env.TRUSTED_PROXIES));
  app.use(requestId());
  // A server span per request, continuing the edge's traceparent (only when tracing is on).
  if (tracingEnabled()) app.use(traceRequests());
  app.use(deps.metrics.service.middleware);
  app.use(accessLog(deps.logger, { context: callerOf }));
  // Every route but the probes reads PostgreSQL. Without Redis only sessions, logins and rate-limited
  // routes fail (503 at once): access tokens work and Stripe webhooks are stored (docs/api.md 3.5), so
  // a Redis outage must not take the service out of rotation.
  app.use(healthRouter({ required: { database: () => pingDatabase(deps.prisma) }, reported: { redis: () => deps.redis.ping() } }));
  app.get('/metrics', deps.metrics.service.handler);
  // Mounted before any JSON parser: the Stripe webhook must read its raw bytes.
  app.use('/api', createPaymentRouter(deps));
  app.use(
    '/api',
    jsonBody(deps.env.MAX_REQUEST_BODY_MB),
    createStatusRouter(deps),
    createOpenApiRouter(),
    createAuthRouter(deps),
    createPasswordResetRouter(deps),
    createVerificationRouter(deps),
    createOidcRouter(deps),
    createSelfRouter(deps),
    createTwoFactorRouter(deps),
    createNotificationRouter(deps),
    createTokenRouter(deps),
    createChannelRouter(deps),
    createOptionRouter(deps),
    createLogRouter(deps),
    createPricingRouter(deps),
    createUsageRouter(deps),
    createRedemptionRouter(deps),
    // Last: its `/user/:id` would otherwise shadow `/user/self`, `/user/token`, ...
    createUserAdminRouter(deps),
  );
  app.use(notFound('envelope'));
  app.use(errorHandler(deps.logger, 'envelope', { context: callerOf }));
  return app;
}
