import { AppError } from '@modelgate/errors';
import { type OfferedTool, withServerToolCalls } from '../../features/billing/pricing';
import {
  type BilledStreamDialect,
  deliverEventStream,
  eventObjectOf,
  malformedEvent,
  reportedStreamError,
} from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext } from '../../features/relay/relay-call';
import { countDeliveredTokens, reportedTokenCount } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { SseEvent } from '../../core/provider';
import type { ChatUsage } from '../../core/chat';
import { isJsonObject, jsonObjectIn, objectOf } from '../../core/json';
import { failureMessageOf, usageToResponses } from './output';
import { ResponsesToolCallCounter } from '../openai/server-tools';
import { nowSeconds } from '../../core/time';
import { ClientBody } from '../client-body';
import type { ResponsesBody } from './request';

/**
 * Responses `usage` in the internal form (docs/api.md 2.6, 2.11): input tokens include cached and
 * cache-write ones, output tokens include reasoning ones. Undefined when it lacks a believable input
 * or output count (the relay then counts itself); details larger than their total are cut to it.
 */
export function usageFromResponses(value: unknown): ChatUsage | undefined {
  const usage = objectOf(value);
  const promptTokens = reportedTokenCount(usage.input_tokens);
  const completionTokens = reportedTokenCount(usage.output_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  const input = objectOf(usage.input_tokens_details);
  const cachedTokens = Math.min(reportedTokenCount(input.cached_tokens) ?? 0, promptTokens);
  return {
    promptTokens,
    completionTokens,
    cachedTokens,
    cacheWriteTokens: Math.min(reportedTokenCount(input.cache_write_tokens) ?? 0, promptTokens - cachedTokens),
    reasoningTokens: Math.min(reportedTokenCount(objectOf(usage.output_tokens_details).reasoning_tokens) ?? 0, completionTokens),
  };
}

function pushStrings(into: string[], ...values: unknown[]): void {
  for (const value of values) if (typeof value === 'string' && value !== '') into.push(value);
}

/** What the output items of a whole response generated, for counting when the upstream sent no usage. */
function outputTexts(output: unknown): string[] {
  const texts: string[] = [];
  if (!Array.isArray(output)) return texts;
  for (const item of output) {
    const { name, arguments: args, input, content, summary } = objectOf(item);
    pushStrings(texts, name, args, input);
    for (const parts of [content, summary]) {
      if (!Array.isArray(parts)) continue;
      for (const part of parts) {
        const { text, refusal } = objectOf(part);
        pushStrings(texts, text, refusal);
      }
    }
  }
  return texts;
}

const NO_CACHE = { cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

/**
 * One Responses call on a type-1 channel that speaks it (docs/api.md 2.10): the client's bytes
 * forwarded to `/v1/responses` (re-serialised once only when the model is mapped), the answer passed
 * back with the client's `model`. `previous_response_id` and every other field go on as sent.
 */
export class ResponsesPassThrough {
  /** The model the client asked for: what it sees in every answer. */
  readonly model: string;
  readonly body: ClientBody;

  constructor(
    body: ResponsesBody,
    raw: Buffer,
    readonly stream: boolean,
    readonly requestId: string,
    /** The prompt's tokens as charged when the upstream reports none. */
    readonly promptTokens: () => number,
    /** The server tools the request offers, whose calls the answer's output items show. */
    readonly serverTools: readonly OfferedTool[],
  ) {
    this.model = body.model;
    this.body = new ClientBody(raw, body, stream);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.stream ? deliverEventStream(upstream, context, new ResponsesPassThroughStream(this)) : this.deliverWhole(upstream, context);
  }

  /** The usage of an answer without one: the prompt and the generated pieces counted. */
  countedUsage(generated: string[]): ChatUsage {
    return { ...NO_CACHE, promptTokens: this.promptTokens(), completionTokens: countDeliveredTokens(generated) };
  }

  /** A whole response: one parse, `model` set (and `usage` when the upstream sent none), one stringify. */
  private async deliverWhole(upstream: UpstreamResponse, { res, signal, startedAt }: DeliveryContext): Promise<Delivery> {
    const answer = answerObjectOf(await readBody(upstream, signal));
    answer.model = this.model;
    let usage = usageFromResponses(answer.usage);
    if (!usage) {
      usage = this.countedUsage(outputTexts(answer.output));
      answer.usage = usageToResponses(usage);
    }
    if (this.serverTools.length > 0 && Array.isArray(answer.output)) {
      const counter = new ResponsesToolCallCounter(this.serverTools);
      for (const item of answer.output) counter.add(objectOf(item).type);
      withServerToolCalls(usage, counter.counted());
    }
    const text = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return { usage, firstByteMs: Date.now() - startedAt, billable: true };
  }
}

/** The events that carry a `response` object. */
const LIFECYCLE_EVENTS: ReadonlySet<string> = new Set([
  'response.created',
  'response.queued',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

/** The events whose `delta` is generated output: text, refusal, reasoning, tool arguments. */
const DELTA_EVENTS: ReadonlySet<string> = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
  'response.function_call_arguments.delta',
  'response.custom_tool_call_input.delta',
]);

function sseEvent(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/**
 * A Responses stream passed on event by event, each one's bytes as they came, except the events
 * that carry the response object, whose `model` becomes the client's. Only those (and the rare
 * `output_item.added` and `error` events) are parsed: deltas are told by their `event:` line and
 * kept unparsed, read only when the charge must count them (no usage came).
 */
export class ResponsesPassThroughStream implements BilledStreamDialect {
  done = false;
  sawUsage = false;
  /** Events passed on: the `sequence_number` of an event the relay adds (OpenAI counts from 0). */
  private relayed = 0;
  /** The response as `response.created` announced it: what a failure the relay reports is about. */
  private started: Record<string, unknown> | undefined;
  private reported: ChatUsage | undefined;
  private billed: ChatUsage | undefined;
  /** The names of the tool calls begun. */
  private readonly toolNames: string[] = [];
  /** The data of the delta events passed on. */
  private readonly deltaEvents: string[] = [];
  /** Server tool calls, counted from the output items begun (each one is billed). */
  private readonly toolCalls: ResponsesToolCallCounter;

  constructor(private readonly pass: ResponsesPassThrough) {
    this.toolCalls = new ResponsesToolCallCounter(pass.serverTools);
  }

  onEvent(event: SseEvent): string | null {
    const data = event.data;
    if (data === null) return null;
    // Servers that leave out `event:` lines name the event in its data only.
    let parsed: Record<string, unknown> | undefined;
    let type = event.event;
    if (type === null) {
      parsed = eventObjectOf(data);
      type = typeof parsed.type === 'string' ? parsed.type : '';
    }
    let text = event.raw;
    if (DELTA_EVENTS.has(type)) {
      this.deltaEvents.push(data);
    } else if (LIFECYCLE_EVENTS.has(type)) {
      text = this.lifecycle(type, parsed ?? eventObjectOf(data)) ?? text;
    } else if (type === 'response.output_item.added') {
      const item = objectOf((parsed ?? eventObjectOf(data)).item);
      pushStrings(this.toolNames, item.name);
      this.toolCalls.add(item.type);
    } else if (type === 'error') {
      const payload = parsed ?? eventObjectOf(data);
      // OpenAI nests the error; the published event schema has its fields at the top.
      throw reportedStreamError(isJsonObject(payload.error) ? payload.error : payload);
    }
    this.relayed += 1;
    return text;
  }

  /** A lifecycle event: the rewritten event, or undefined when its bytes can go as they are. */
  private lifecycle(type: string, payload: Record<string, unknown>): string | undefined {
    const response = payload.response;
    if (!isJsonObject(response)) throw malformedEvent();
    if (type === 'response.failed') throw reportedStreamError(response.error);
    if (type === 'response.created') this.started = response;
    let rewrite = false;
    if (type === 'response.completed' || type === 'response.incomplete') {
      this.done = true;
      this.reported = usageFromResponses(response.usage);
      if (this.reported) {
        this.sawUsage = true;
      } else {
        response.usage = usageToResponses(this.billedUsage());
        rewrite = true;
      }
    }
    if (response.model !== this.pass.model) {
      response.model = this.pass.model;
      rewrite = true;
    }
    return rewrite ? sseEvent(type, payload) : undefined;
  }

  /**
   * The upstream's usage, which comes with the last event; without it (a cut stream, or a server
   * that reports none) the prompt and the delivered pieces are counted.
   */
  billedUsage(): ChatUsage {
    this.billed ??= withServerToolCalls(this.reported ?? this.pass.countedUsage(this.deliveredPieces()), this.toolCalls.counted());
    return this.billed;
  }

  /** The tool names and the deltas delivered (a delta that is not JSON was passed on, and counts nothing). */
  private deliveredPieces(): string[] {
    const pieces = [...this.toolNames];
    for (const data of this.deltaEvents) pushStrings(pieces, jsonObjectIn(data)?.delta);
    return pieces;
  }

  /** A stream that ended without its last event did not complete: the client is told so. */
  tail(): string {
    return this.done ? '' : this.errorTail(new AppError('upstream_error', 'the upstream stream ended before the response was complete'));
  }

  /**
   * `response.failed` (docs/api.md 2.10) about the upstream's response. Without `output`, so that a
   * client keeps the items it received (the openai SDK fills a failed response's output from them).
   */
  errorTail(error: AppError): string {
    const message = failureMessageOf(error, this.pass.requestId);
    const { output: _output, ...started } = this.started ?? { id: `resp_${this.pass.requestId}`, object: 'response', created_at: nowSeconds() };
    const response = { ...started, model: this.pass.model, status: 'failed', error: { code: 'server_error', message } };
    return sseEvent('response.failed', { type: 'response.failed', sequence_number: this.relayed, response });
  }
}
