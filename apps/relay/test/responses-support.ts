// What the Responses tests (docs/api.md 2.10) share: the four ways a channel answers /v1/responses,
// one channel of each on the fake upstream, and readers of what the openai SDK gets back.
import type { ChannelOverrides } from '@modelgate/testing';
import type OpenAI from 'openai';
import { ANTHROPIC, CHAT_CHANNELS, CHAT_MODELS, chatChannel, GEMINI, OPENAI } from './chat-support';
import { harness, setUnitPrices, upstream } from './harness';

export interface ResponsesRoute {
  name: string;
  type: typeof OPENAI | typeof ANTHROPIC | typeof GEMINI;
  /** The channel's fields beyond chatChannel's. */
  fields: ChannelOverrides;
  /** The upstream path the call reaches (Gemini: the start of it). */
  path: string;
  native: boolean;
}

export const NATIVE: ResponsesRoute = { name: 'OpenAI (native)', type: OPENAI, fields: {}, path: '/v1/responses', native: true };
export const VIA_CHAT: ResponsesRoute = {
  name: 'OpenAI-compatible with settings.responses "chat"',
  type: OPENAI,
  fields: { settings: { responses: 'chat' } },
  path: '/v1/chat/completions',
  native: false,
};
export const VIA_ANTHROPIC: ResponsesRoute = { name: 'Anthropic', type: ANTHROPIC, fields: {}, path: '/v1/messages', native: false };
export const VIA_GEMINI: ResponsesRoute = { name: 'Gemini', type: GEMINI, fields: {}, path: '/v1beta/models/', native: false };

export const ROUTES = [NATIVE, VIA_CHAT, VIA_ANTHROPIC, VIA_GEMINI];
export const TRANSLATED_ROUTES = [VIA_CHAT, VIA_ANTHROPIC, VIA_GEMINI];

/** For describe.each: [name, route]. */
export const named = (routes: ResponsesRoute[]): [string, ResponsesRoute][] => routes.map((route) => [route.name, route]);

/** Unit prices for the chat models and the route's one channel, in the caches; the model to ask for. */
export async function withRoute(route: ResponsesRoute): Promise<string> {
  await setUnitPrices(harness.prisma, CHAT_MODELS);
  await chatChannel(harness.prisma, route.type, upstream.url, route.fields);
  await harness.reloadCaches();
  return CHAT_CHANNELS[route.type].model;
}

/** Every event of a stream the SDK read, and the response it put together. */
export interface StreamedResponse {
  events: OpenAI.Responses.ResponseStreamEvent[];
  response: OpenAI.Responses.Response;
}

/** A request body without `stream`: the helpers below set it. */
export type ResponsesParams = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>;

/** Streams one call with the SDK's helper, as Codex-like clients do, to its final response. */
export async function streamResponse(openai: OpenAI, body: ResponsesParams): Promise<StreamedResponse> {
  const stream = openai.responses.stream(body);
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  stream.on('event', (event) => events.push(event));
  const response = await stream.finalResponse();
  return { events, response };
}

/** One call, plain or streamed, as the response the client ends up with. */
export async function respond(openai: OpenAI, stream: boolean, body: ResponsesParams): Promise<OpenAI.Responses.Response> {
  return stream ? (await streamResponse(openai, body)).response : openai.responses.create(body);
}

/** The Responses `usage` object for these counts. */
export function responsesUsage({ input, output, cached = 0, reasoning = 0 }: { input: number; output: number; cached?: number; reasoning?: number }) {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

/** The `data:` payloads of an SSE body, by event, with the `event:` line each had. */
export function sseEvents(text: string): { event: string | undefined; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? '{}';
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** POSTs a JSON body to /v1/responses with the key; the status and the body as text. */
export async function postResponses(key: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${harness.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}
