// What the /v1/messages tests (docs/api.md 2.9) share: the official Anthropic SDK pointed at the
// relay, one messages channel of each type on the fake upstream, and what the fake received.
import Anthropic from '@anthropic-ai/sdk';
import { createChannel, setOption } from '@modelgate/testing';
import { ANTHROPIC, CHAT_CHANNELS, type DirectType, GEMINI, OPENAI } from './chat-support';
import { harness, type RelayHarness, upstream } from './harness';

export { ANTHROPIC, GEMINI, OPENAI };

/**
 * Per channel type: the model a Messages client asks for, the name the channel maps it to, the
 * channel's key. (The chat tests' Anthropic model is one the SDK warns about as deprecated.)
 */
export const MESSAGES_CHANNELS: Readonly<Record<DirectType, { model: string; upstreamModel: string; key: string }>> = {
  ...CHAT_CHANNELS,
  [ANTHROPIC]: { model: 'claude-opus-4-5', upstreamModel: 'claude-opus-4-5-20251101', key: CHAT_CHANNELS[ANTHROPIC].key },
};

/** An Anthropic model served by an Anthropic channel that does not rename it (its requests pass byte for byte). */
export const UNMAPPED_MODEL = 'claude-haiku-4-5';

/** The model a Messages client asks for on a channel of `type`. */
export const modelOf = (type: DirectType): string => MESSAGES_CHANNELS[type].model;

/**
 * The prices of docs/api.md 2.11's example for every test model: ModelRatio 1.5, CompletionRatio 5,
 * CacheRatio 0.1, CacheCreationRatio 1.25 (so a charge shows each token kind's price).
 */
export const PRICE = { model: 1.5, completion: 5, cache: 0.1, cacheCreation: 1.25 } as const;

/** The charge of docs/api.md 2.11 at PRICE (group ratio 1). */
export function chargeOf({ prompt, completion, cached = 0, cacheWrite = 0 }: { prompt: number; completion: number; cached?: number; cacheWrite?: number }): number {
  const units = prompt - cached - cacheWrite + cached * PRICE.cache + cacheWrite * PRICE.cacheCreation + completion * PRICE.completion;
  return Math.round(units * PRICE.model);
}

/** PRICE for every test model, a channel of each of `types` on the fake upstream, and the Anthropic channel of UNMAPPED_MODEL. */
export async function withMessagesChannels(types: DirectType[] = [ANTHROPIC, OPENAI, GEMINI]): Promise<void> {
  const models = [...types.map(modelOf), UNMAPPED_MODEL];
  const each = (value: number) => Object.fromEntries(models.map((model) => [model, value]));
  await setOption(harness.prisma, 'ModelRatio', each(PRICE.model));
  await setOption(harness.prisma, 'CompletionRatio', each(PRICE.completion));
  await setOption(harness.prisma, 'CacheRatio', each(PRICE.cache));
  await setOption(harness.prisma, 'CacheCreationRatio', each(PRICE.cacheCreation));
  for (const type of types) {
    const { model, upstreamModel, key } = MESSAGES_CHANNELS[type];
    await createChannel(harness.prisma, { type, baseUrl: upstream.url, key, models: model, modelMapping: JSON.stringify({ [model]: upstreamModel }) });
  }
  if (types.includes(ANTHROPIC)) {
    await createChannel(harness.prisma, { type: ANTHROPIC, baseUrl: upstream.url, key: MESSAGES_CHANNELS[ANTHROPIC].key, models: UNMAPPED_MODEL });
  }
  await harness.reloadCaches();
}

export interface SdkOptions {
  /** Send the key as `authToken` (`Authorization: Bearer`) instead of `apiKey`. */
  bearer?: boolean;
  headers?: Record<string, string>;
  /** Every request the SDK sent: its body as sent, and the `anthropic-version` it said. */
  sent?: SentRequest[];
}

export interface SentRequest {
  body: string;
  version: string | null;
}

/** The official SDK on the relay (its `baseURL` is the host: it appends `/v1/messages` itself), no retries. */
export function anthropicClient(relay: RelayHarness, key: string, { bearer = false, headers = {}, sent }: SdkOptions = {}): Anthropic {
  return new Anthropic({
    baseURL: relay.url,
    ...(bearer ? { authToken: key, apiKey: null } : { apiKey: key }),
    maxRetries: 0,
    defaultHeaders: headers,
    ...(sent
      ? {
          fetch: (...[url, init]: Parameters<typeof fetch>) => {
            sent.push({ body: String(init?.body), version: new Headers(init?.headers).get('anthropic-version') });
            return fetch(url, init);
          },
        }
      : {}),
  });
}

/** POSTs raw JSON to a relay path with headers of our choosing; the status and the parsed body. */
export async function postMessages(path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const response = await fetch(`${harness.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

/** The SSE events of a stream body, as `{event, data}` with the data parsed. */
export function sseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(chunk)?.[1] ?? '{}';
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
