// What the chat, embeddings and client tests (docs/api.md 2.6-2.8) share: one chat channel of each
// type on a fake upstream, with its model mapping, and readers of what the openai SDK gets back.
import type { PrismaClient } from '@modelgate/db';
import { CHANNEL_TYPE, consumeOtherView } from '@modelgate/schemas';
import { type ChannelOverrides, createChannel } from '@modelgate/testing';
import type { RecordedRequest } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { consumeLogs, eventually, expectLedgerInvariant, harness, type RelayHarness, setUnitPrices, upstream } from './harness';

export const { openai: OPENAI, anthropic: ANTHROPIC, gemini: GEMINI } = CHANNEL_TYPE;

/** The channel types with a direct API (the cloud types have their own suites). */
export type DirectType = typeof OPENAI | typeof ANTHROPIC | typeof GEMINI;

/** Per channel type: the model a client asks for, the name the channel maps it to, the channel's key. */
export const CHAT_CHANNELS: Readonly<Record<DirectType, { model: string; upstreamModel: string; key: string }>> = {
  [OPENAI]: { model: 'gpt-4o-mini', upstreamModel: 'openai/gpt-4o-mini', key: 'sk-upstream-openai-secret' },
  [ANTHROPIC]: { model: 'claude-sonnet-4-5', upstreamModel: 'claude-sonnet-4-5-20250929', key: 'sk-ant-api03-upstream-anthropic-secret' },
  [GEMINI]: { model: 'gemini-2.5-flash', upstreamModel: 'gemini-2.5-flash-preview-09-2025', key: 'gemini-upstream-channel-secret' },
};

export const CHAT_MODELS = Object.values(CHAT_CHANNELS).map((channel) => channel.model);

/** A channel of `type` on `baseUrl` serving its chat model, mapped to the upstream name. */
export function chatChannel(prisma: PrismaClient, type: DirectType, baseUrl: string, fields: ChannelOverrides = {}) {
  const { model, upstreamModel, key } = CHAT_CHANNELS[type];
  return createChannel(prisma, { type, baseUrl, key, models: model, modelMapping: JSON.stringify({ [model]: upstreamModel }), ...fields });
}

/** Unit prices for the chat models and a chat channel of each of `types` on the first upstream, in the caches. */
export async function withChatChannels(types: DirectType[]): Promise<void> {
  await setUnitPrices(harness.prisma, CHAT_MODELS);
  for (const type of types) await chatChannel(harness.prisma, type, upstream.url);
  await harness.reloadCaches();
}

/** The fake's request at `index`, failing when there is none. */
export function recorded(requests: RecordedRequest[], index = 0): RecordedRequest & { json: Record<string, unknown> } {
  const request = requests[index];
  if (!request) throw new Error(`the upstream received ${requests.length} requests, not ${index + 1}`);
  return request as RecordedRequest & { json: Record<string, unknown> };
}

/** The client's key appears nowhere in what the upstream received (docs/api.md 2: keys are never forwarded). */
export function expectKeyNotForwarded(request: RecordedRequest, clientKey: string): void {
  const secret = clientKey.replace(/^sk-/, '');
  expect(JSON.stringify(request.headers) + request.url + request.body.toString('utf8')).not.toContain(secret);
}

/** The full `usage` object of docs/api.md 2.1 for these counts (text tokens derived as the relay does). */
export function fullUsage({ prompt, completion, cached = 0, reasoning = 0 }: { prompt: number; completion: number; cached?: number; reasoning?: number }) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, text_tokens: prompt, audio_tokens: 0, image_tokens: 0 },
    completion_tokens_details: { text_tokens: completion - reasoning, audio_tokens: 0, reasoning_tokens: reasoning },
  };
}

/** `reasoning_content` is not in the SDK's types: the relay adds it to messages and deltas (docs/api.md 2.6). */
export function reasoningOf(messageOrDelta: object | undefined): unknown {
  return (messageOrDelta as { reasoning_content?: unknown } | undefined)?.reasoning_content;
}

export interface StreamedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A streamed chat answer put together as a client does. */
export interface StreamedChat {
  chunks: OpenAI.ChatCompletionChunk[];
  content: string;
  reasoning: string;
  toolCalls: StreamedToolCall[];
  finishReason: string | null;
  /** The usage chunk's, if one came. */
  usage: OpenAI.CompletionUsage | undefined;
}

/** Iterates an SDK stream to its end (the SDK stops at `[DONE]`), assembling the deltas of choice 0. */
export async function readChatStream(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<StreamedChat> {
  const result: StreamedChat = { chunks: [], content: '', reasoning: '', toolCalls: [], finishReason: null, usage: undefined };
  for await (const chunk of stream) {
    result.chunks.push(chunk);
    if (chunk.usage) result.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    result.content += choice.delta.content ?? '';
    const reasoning = reasoningOf(choice.delta);
    if (typeof reasoning === 'string') result.reasoning += reasoning;
    for (const call of choice.delta.tool_calls ?? []) {
      const known = result.toolCalls[call.index];
      if (known) known.arguments += call.function?.arguments ?? '';
      else result.toolCalls[call.index] = { id: call.id ?? '', name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' };
    }
    if (choice.finish_reason) result.finishReason = choice.finish_reason;
  }
  return result;
}

/** POSTs a JSON body to the relay with the key and returns the status and the raw SSE `data:` payloads. */
export async function postForEvents(harness: RelayHarness, path: string, key: string, body: unknown): Promise<{ status: number; events: string[] }> {
  const response = await fetch(`${harness.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const events = text.split('\n\n').filter((event) => event !== '').map((event) => event.replace(/^data: /, ''));
  return { status: response.status, events };
}

/** The consume rows once the ledger is written. */
export async function settledConsumeRows(harness: RelayHarness) {
  await harness.relay.ledger.flush();
  return consumeLogs(harness.prisma);
}

/** The one consume row of a test's one call. */
export async function settledConsumeRow(harness: RelayHarness) {
  const rows = await settledConsumeRows(harness);
  expect(rows).toHaveLength(1);
  const [row] = rows;
  if (!row) throw new Error('no consume row');
  return row;
}

/**
 * docs/api.md 2.5: a stream its client left at `abortedAt`, while the upstream was sending `pieces`
 * slowly, closed the upstream call within 1 s and was charged for what was delivered (at least
 * `delivered` tokens). The call's consume row, for further checks.
 */
export async function expectLeftStreamCharged(abortedAt: number, { delivered, pieces }: { delivered: number; pieces: number }) {
  expect(abortedAt).toBeGreaterThan(0);
  const request = recorded(upstream.requests);
  await eventually(() => expect(request.closed).toBe(true), 2_000);
  expect(request.completed).toBe(false);
  expect((request.closedAt ?? Infinity) - abortedAt).toBeLessThan(1_000);
  expect(request.chunksSent).toBeLessThan(pieces);

  const row = await eventually(() => settledConsumeRow(harness));
  expect(row.isStream).toBe(true);
  expect(row.completionTokens).toBeGreaterThanOrEqual(delivered);
  expect(row.completionTokens).toBeLessThan(pieces);
  expect(row.promptTokens).toBeGreaterThan(0);
  await expectLedgerInvariant(harness.prisma);
  return row;
}

/** A call's charge and every count and ratio it was computed from (docs/api.md 2.11). */
export interface ChargedCall {
  model: string;
  stream: boolean;
  prompt: number;
  completion: number;
  cached: number;
  written: number;
  reasoning: number;
  modelRatio: number;
  completionRatio: number;
  cacheRatio: number;
  cacheCreationRatio: number;
  quota: number;
}

/**
 * docs/api.md 2.11: the call's one consume row keeps its charge and every count and ratio it came
 * from (default group), and the user who had `startQuota` paid exactly the charge.
 */
export async function expectChargedRow(userId: number, startQuota: number, expected: ChargedCall): Promise<void> {
  const row = await settledConsumeRow(harness);
  expect(row).toMatchObject({
    modelName: expected.model,
    promptTokens: expected.prompt,
    completionTokens: expected.completion,
    quota: BigInt(-expected.quota),
    isStream: expected.stream,
  });
  // As the account shows it: the counts of 0 and the ratios of tokens the call did not have left out of the row.
  expect(consumeOtherView(row.other as Record<string, unknown>)).toMatchObject({
    model_ratio: expected.modelRatio,
    completion_ratio: expected.completionRatio,
    group_ratio: 1,
    cache_ratio: expected.cached > 0 ? expected.cacheRatio : 1,
    cache_creation_ratio: expected.written > 0 ? expected.cacheCreationRatio : 1,
    cache_tokens: expected.cached,
    cache_creation_tokens: expected.written,
    reasoning_tokens: expected.reasoning,
  });
  const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(user.quota).toBe(BigInt(startQuota - expected.quota));
  await expectLedgerInvariant(harness.prisma);
}

/**
 * Reads an openai SDK stream, adding up `textOf` each event, and aborts it once the text reads
 * `stopAt`; returns when it aborted. The SDK either ends the iteration quietly or reports the abort
 * as its own error.
 */
export async function abortOnceReceived<Event>(
  stream: AsyncIterable<Event>,
  controller: AbortController,
  textOf: (event: Event) => string,
  stopAt: string,
): Promise<number> {
  let received = '';
  let abortedAt = 0;
  const ended = await (async () => {
    for await (const event of stream) {
      received += textOf(event);
      if (received === stopAt) {
        abortedAt = Date.now();
        controller.abort();
      }
    }
  })().catch((err: unknown) => err);
  if (ended !== undefined) expect(ended).toBeInstanceOf(OpenAI.APIUserAbortError);
  return abortedAt;
}
