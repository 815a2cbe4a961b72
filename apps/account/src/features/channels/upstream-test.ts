import { CHANNEL_TYPES, type ChannelType } from '@modelgate/schemas';
import { request } from 'undici';

const TEST_TIMEOUT_MS = 30_000;
const MAX_MESSAGE_LENGTH = 300;

export interface UpstreamTarget {
  type: ChannelType;
  /** The base URL to use, already resolved (the type's default when the channel has none). */
  baseUrl: string;
  key: string;
  /** The upstream model name (after the channel's mapping). */
  model: string;
}

export interface UpstreamTestResult {
  success: boolean;
  message: string;
  timeMs: number;
}

/** docs/api.md 3.3: one small chat request in the channel's own dialect (its type's facts). */
function requestFor(target: UpstreamTarget): { url: string; headers: Record<string, string>; body: unknown } {
  const facts = CHANNEL_TYPES[target.type];
  const { path, body } = facts.testRequest(target.model);
  return { url: `${target.baseUrl}${path}`, headers: facts.authHeaders(target.key), body };
}

/** The upstream's own error text, with the channel key masked wherever the upstream echoed it. */
function describeFailure(status: number, text: string, key: string): string {
  let detail = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === 'string') detail = message;
  } catch {
    // not JSON: keep the text
  }
  const masked = key ? detail.split(key).join('***') : detail;
  return `upstream answered ${status}: ${masked.slice(0, MAX_MESSAGE_LENGTH)}`.trim();
}

/** Why no answer came back (timeout, refused, DNS), without the request's URL or key. */
function networkFailureMessage(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return 'upstream timed out';
  }
  return `upstream unreachable${code ? ` (${code})` : ''}`;
}

/** Sends one minimal real request (1 output token) through the channel and times it. */
export async function testUpstream(target: UpstreamTarget): Promise<UpstreamTestResult> {
  const { url, headers, body } = requestFor(target);
  const started = performance.now();
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      headersTimeout: TEST_TIMEOUT_MS,
      bodyTimeout: TEST_TIMEOUT_MS,
    });
    const text = await response.body.text();
    const timeMs = Math.round(performance.now() - started);
    if (response.statusCode >= 200 && response.statusCode < 300) return { success: true, message: '', timeMs };
    return { success: false, message: describeFailure(response.statusCode, text, target.key), timeMs };
  } catch (err) {
    return { success: false, message: networkFailureMessage(err), timeMs: Math.round(performance.now() - started) };
  }
}
