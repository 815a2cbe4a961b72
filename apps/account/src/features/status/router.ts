import { readOptions, type StatusView } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { isOidcConfigured } from '../oidc/provider';
import packageJson from '../../../package.json';

export const SYSTEM_NAME = 'Modelgate';

/** docs/api.md 3.1 `GET /api/status`: public settings a client needs before logging in. */
export function createStatusRouter(deps: AccountDeps): Router {
  const router = Router();
  router.get('/status', async (_req, res) => {
    const options = await readOptions(deps.prisma);
    const status: StatusView = {
      version: packageJson.version,
      system_name: SYSTEM_NAME,
      quota_per_unit: options.QuotaPerUnit,
      register_enabled: options.RegisterEnabled,
      stripe_enabled: Boolean(options.StripeApiSecret && options.StripePriceId && options.StripeWebhookSecret),
      min_topup: options.StripeMinTopUp,
      email_verification: options.EmailVerificationEnabled,
      smtp_enabled: options.SMTPServer.trim() !== '',
      oidc_enabled: isOidcConfigured(options),
    };
    sendData(res, status);
  });
  return router;
}
