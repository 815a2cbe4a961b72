import { createHmac } from 'node:crypto';
import { checkWebhookUrl, webhookLookup } from '@modelgate/http';
import { Agent, request } from 'undici';

/** The whole delivery (connection, answer, its body) must be over by then. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** What is read of a receiver's answer before it is dropped: only the status counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The receiver answered, but not with a 2xx (a redirect included: they are not followed). */
export class WebhookRejectedError extends Error {
  override name = 'WebhookRejectedError';
  constructor(readonly status: number) {
    super(`the receiver answered HTTP ${status}`);
  }
}

/** `X-Modelgate-Signature`: the hex HMAC-SHA256 of the exact body bytes, keyed with the user's secret. */
export function webhookSignature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * POSTs a JSON body, signed, to a user's webhook (docs/api.md 3.9.6). The address is checked as at
 * saving, and the connection resolves the name itself through the same check, connecting only to
 * addresses that passed it: a name re-pointed at an internal address after it was saved, or between
 * the two lookups, reaches nothing. Throws WebhookAddressError for an address not allowed,
 * WebhookRejectedError for a non-2xx answer, and the network's error otherwise.
 */
export async function postSignedWebhook(url: string, body: string, secret: string, options: { allowPrivate: boolean }): Promise<number> {
  await checkWebhookUrl(url, options);
  const dispatcher = new Agent({
    connect: { lookup: webhookLookup(options), timeout: WEBHOOK_TIMEOUT_MS },
    headersTimeout: WEBHOOK_TIMEOUT_MS,
    bodyTimeout: WEBHOOK_TIMEOUT_MS,
  });
  try {
    const answer = await request(url, {
      method: 'POST',
      dispatcher,
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Modelgate-Webhook',
        'x-modelgate-signature': webhookSignature(body, secret),
      },
      body,
    });
    await answer.body.dump({ limit: MAX_ANSWER_BYTES });
    if (answer.statusCode < 200 || answer.statusCode > 299) throw new WebhookRejectedError(answer.statusCode);
    return answer.statusCode;
  } finally {
    await dispatcher.destroy();
  }
}
