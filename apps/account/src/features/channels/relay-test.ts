import { AppError } from '@modelgate/errors';
import { CHANNEL_TEST_PATH, type ChannelTestRequest, type ChannelTestResult, channelTestResultSchema } from '@modelgate/schemas';
import { request } from 'undici';

/** Longer than the relay's wait for an upstream's first byte, so the relay's own verdict comes back. */
const TEST_TIMEOUT_MS = 90_000;

export interface RelayTestTarget {
  /** RELAY_URL: where the relay's internal API listens. */
  relayUrl: string;
  /** internalApiToken(CRYPTO_SECRET). */
  token: string;
}

/**
 * The channel test (docs/api.md 3.3) runs in the relay, which owns every provider's paths, signing
 * and token exchange; the account service asks it and records the outcome. A relay that cannot be
 * reached is a 503: no test happened.
 */
export async function testThroughRelay({ relayUrl, token }: RelayTestTarget, test: ChannelTestRequest): Promise<ChannelTestResult> {
  let status: number;
  let body: unknown;
  try {
    const response = await request(`${relayUrl}${CHANNEL_TEST_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(test),
      headersTimeout: TEST_TIMEOUT_MS,
      bodyTimeout: TEST_TIMEOUT_MS,
    });
    status = response.statusCode;
    body = await response.body.json().catch(() => undefined);
  } catch {
    throw new AppError('service_unavailable', 'the relay could not be reached to test the channel');
  }
  const result = channelTestResultSchema.safeParse(body);
  if (status === 404) throw new AppError('not_found', 'channel not found');
  if (status !== 200 || !result.success) throw new AppError('bad_gateway', `the relay could not test the channel (status ${status})`);
  return result.data;
}
