import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '@modelgate/errors';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import { type BilledStreamDialect, billedUsageOf, eventObjectOf, reportedStreamError } from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext } from '../../features/relay/relay-call';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { SseEvent } from '../../core/provider';
import type { ChatUsage } from '../../core/chat';
import { isJsonObject, jsonObjectIn, objectOf } from '../../core/json';
import {
  type AnthropicUsage,
  MESSAGE_DELTA_USAGE,
  MESSAGE_START_USAGE,
  mergeReportedUsage,
  partialUsageOf,
} from '../../providers/anthropic/usage';
import { anthropicErrorEvent } from './event-encoder';
import { anthropicStreamErrorStatus } from '../../providers/anthropic/errors';

/** The protocol headers of a Messages client that an Anthropic channel receives (docs/api.md 2.9). */
export interface AnthropicClientHeaders {
  version: string | undefined;
  beta: string | undefined;
}

export function anthropicClientHeadersOf(headers: IncomingHttpHeaders): AnthropicClientHeaders {
  const version = headers['anthropic-version'];
  const beta = headers['anthropic-beta'];
  return { version: typeof version === 'string' && version ? version : undefined, beta: typeof beta === 'string' && beta ? beta : undefined };
}

/** The model the client asked for when the channel renames it (what the client must see), else undefined. */
export function renamedModel(channel: ChannelRecord, model: string): string | undefined {
  const upstreamModel = channel.modelMapping.get(model);
  return upstreamModel === undefined || upstreamModel === model ? undefined : model;
}

/**
 * What an answer block, a stream's `content_block_start` block or a `content_block_delta` delta
 * generated, for counting when no usage came: text, thinking, tool names and inputs.
 */
function generatedPieces(part: Record<string, unknown>, into: string[]): void {
  const { type } = part;
  if ((type === 'text' || type === 'text_delta') && typeof part.text === 'string') into.push(part.text);
  else if ((type === 'thinking' || type === 'thinking_delta') && typeof part.thinking === 'string') into.push(part.thinking);
  else if (type === 'input_json_delta' && typeof part.partial_json === 'string') into.push(part.partial_json);
  else if (type === 'tool_use' || type === 'server_tool_use') {
    if (typeof part.name === 'string') into.push(part.name);
    if (isJsonObject(part.input) && Object.keys(part.input).length > 0) into.push(JSON.stringify(part.input));
  }
}

/**
 * A whole Messages answer from an Anthropic channel: its bytes as they are, parsed for the usage
 * only, and re-serialised only to show the client the model it asked for (docs/api.md 2.9).
 * Without usage, the prompt and the generated text are counted (2.5).
 */
export async function deliverWholeMessage(
  upstream: UpstreamResponse,
  { res, signal, startedAt }: DeliveryContext,
  clientModel: string | undefined,
  promptTokens: () => number,
): Promise<Delivery> {
  const raw = await readBody(upstream, signal);
  const answer = answerObjectOf(raw);
  const usage = billedUsageOf(partialUsageOf(objectOf(answer.usage)), false, () => {
    const pieces: string[] = [];
    if (Array.isArray(answer.content)) for (const block of answer.content) generatedPieces(objectOf(block), pieces);
    return pieces;
  }, promptTokens);
  let body: Buffer | string = raw;
  if (clientModel !== undefined) {
    answer.model = clientModel;
    body = JSON.stringify(answer);
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return { usage, firstByteMs: Date.now() - startedAt, billable: true };
}

/** The event's name: its `event:` line, or (from a server that sends none) its data's `type`. */
function eventNameOf(event: SseEvent, data: string): unknown {
  return event.event ?? jsonObjectIn(data)?.type;
}

/**
 * An Anthropic stream passed through event by event (docs/api.md 2.9): each event's bytes written
 * as they arrive (thinking blocks and their signatures untouched), only `message_start` rewritten,
 * and only when the channel renamed the model. Usage is read from `message_start` (the prompt
 * side) and `message_delta` (the output); the many `content_block_delta` events are not parsed
 * unless the charge has to count what they delivered.
 */
export class MessagesPassThroughStream implements BilledStreamDialect {
  done = false;
  private readonly usage: AnthropicUsage = {};
  /** The data of the events that carry generated pieces, parsed only when they must be counted. */
  private readonly contentEvents: string[] = [];
  private billed: ChatUsage | undefined;

  constructor(
    /** The model to show in `message_start` when the channel renamed it. */
    private readonly clientModel: string | undefined,
    private readonly promptTokens: () => number,
  ) {}

  onEvent(event: SseEvent): string | null {
    const data = event.data;
    if (data === null) return event.raw;
    switch (eventNameOf(event, data)) {
      case 'content_block_delta':
      case 'content_block_start':
        this.contentEvents.push(data);
        return event.raw;
      case 'message_start':
        return this.messageStart(event, data);
      case 'message_delta':
        this.report(eventObjectOf(data).usage, MESSAGE_DELTA_USAGE);
        return event.raw;
      case 'message_stop':
        this.done = true;
        return event.raw;
      case 'error': {
        // Anthropic's mid-stream overload reaches the client as overloaded_error, which its SDKs retry.
        const { error } = eventObjectOf(data);
        throw reportedStreamError(error, anthropicStreamErrorStatus(error));
      }
      default:
        // ping, content_block_stop, and event types added later
        return event.raw;
    }
  }

  private messageStart(event: SseEvent, data: string): string {
    const start = eventObjectOf(data);
    const message = objectOf(start.message);
    this.report(message.usage, MESSAGE_START_USAGE);
    if (this.clientModel === undefined || !isJsonObject(start.message)) return event.raw;
    message.model = this.clientModel;
    return `event: message_start\ndata: ${JSON.stringify(start)}\n\n`;
  }

  /**
   * The output count came (`message_delta`). `message_start` reports the prompt before anything is
   * generated: a stream cut after it that delivered nothing costs nothing (docs/api.md 2.5).
   */
  get sawUsage(): boolean {
    return this.usage.output_tokens !== undefined;
  }

  private report(usage: unknown, fields: readonly (keyof AnthropicUsage)[]): void {
    if (isJsonObject(usage)) mergeReportedUsage(this.usage, usage, fields);
  }

  private deliveredPieces(): string[] {
    const pieces: string[] = [];
    for (const data of this.contentEvents) {
      const event = objectOf(jsonObjectIn(data));
      generatedPieces(objectOf(event.delta ?? event.content_block), pieces);
    }
    return pieces;
  }

  billedUsage(cut: boolean): ChatUsage {
    this.billed ??= billedUsageOf(partialUsageOf(this.usage), cut, () => this.deliveredPieces(), this.promptTokens);
    return this.billed;
  }

  /**
   * After `message_stop` nothing; a stream that ended without it was cut short, which the client
   * must learn (its SDK would take the partial message for a whole one).
   */
  tail(): string {
    return this.done ? '' : anthropicErrorEvent(new AppError('upstream_error', 'the upstream stream ended before message_stop'));
  }

  errorTail(error: AppError): string {
    return anthropicErrorEvent(error);
  }
}
