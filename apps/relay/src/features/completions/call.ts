import { type AppError, toOpenAI } from '@modelgate/errors';
import type { ChannelRecord } from '../channels/channel-cache';
import { readBody, UpstreamFailure, type UpstreamResponse } from '../upstream/client';
import type { SseEvent } from '../upstream/sse';
import { relayEventStream, type StreamDialect, StreamEventError } from '../relay/event-stream';
import type { Delivery, DeliveryContext, RelayCall } from '../relay/relay-call';
import { countDeliveredTokens } from '../relay/tokens';
import { maskUpstreamText } from '../relay/upstream-errors';
import { type CompletionRequest, countPromptTokens, estimateCompletion } from './request';
import { chargedUsageOf, choiceTexts, completeUsage } from './usage';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** `POST /v1/completions` through an OpenAI-compatible channel (docs/api.md 2.1). */
export class CompletionCall implements RelayCall {
  readonly kind = 'openai' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  private readonly clientWantsUsage: boolean;
  private readonly bodies = new Map<string, Buffer | string>();

  constructor(
    private readonly body: CompletionRequest,
    private readonly raw: Buffer,
    private readonly requestId: string,
  ) {
    this.model = body.model;
    this.stream = body.stream === true;
    this.clientWantsUsage = body.stream_options?.include_usage === true;
    this.estimate = estimateCompletion(body);
  }

  promptTokens(): number {
    return countPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string) {
    return {
      path: `${channel.pathPrefix}/v1/completions`,
      headers: { ...JSON_HEADERS, authorization: `Bearer ${channel.key}` },
      body: this.upstreamBody(upstreamModel),
    };
  }

  /**
   * The client's bytes as they are when nothing must change; otherwise one re-serialisation with
   * the mapped model and, for streams, `stream_options.include_usage` (so the charge is exact).
   */
  private upstreamBody(upstreamModel: string): Buffer | string {
    const needsUsage = this.stream && !this.clientWantsUsage;
    if (upstreamModel === this.model && !needsUsage) return this.raw;
    let body = this.bodies.get(upstreamModel);
    if (body === undefined) {
      const copy: Record<string, unknown> = { ...this.body, model: upstreamModel };
      if (this.stream) copy.stream_options = { ...this.body.stream_options, include_usage: true };
      body = JSON.stringify(copy);
      this.bodies.set(upstreamModel, body);
    }
    return body;
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.stream ? this.deliverStream(upstream, context) : this.deliverWhole(upstream, context);
  }

  /** One parse, `model` and `usage` rewritten, one stringify. */
  private async deliverWhole(upstream: UpstreamResponse, { res, signal, startedAt }: DeliveryContext): Promise<Delivery> {
    const raw = await readBody(upstream, signal);
    let completion: Record<string, unknown>;
    try {
      completion = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new UpstreamFailure('other', 'the upstream answered with invalid JSON');
    }
    if (completion === null || typeof completion !== 'object') throw new UpstreamFailure('other', 'the upstream answered with invalid JSON');
    completion.model = this.model;
    const usage = completeUsage(completion.usage, () => this.promptTokens(), () => {
      const texts: string[] = [];
      choiceTexts(completion.choices, texts);
      return countDeliveredTokens(texts);
    });
    completion.usage = usage;
    const text = JSON.stringify(completion);
    res.writeHead(200, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return {
      usage: chargedUsageOf(usage),
      firstByteMs: Date.now() - startedAt,
      billable: true,
    };
  }

  private async deliverStream(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const dialect = new CompletionStreamDialect(this.model, this.clientWantsUsage, this.requestId, () => this.promptTokens(), context.channel);
    const result = await relayEventStream(upstream, context.res, context.signal, dialect, context.startedAt);
    const cut = result.clientAborted || result.failure !== undefined;
    const usage = dialect.usage();
    return {
      usage: chargedUsageOf(usage),
      firstByteMs: result.firstByteMs,
      // A cut stream is charged for what was generated; one that generated nothing costs nothing.
      billable: !cut || dialect.sawUsage || usage.completion_tokens > 0,
      streamFailure: result.failure,
    };
  }
}

/** OpenAI completion chunks: model rewritten, usage chunk only when asked for, always `[DONE]`. */
class CompletionStreamDialect implements StreamDialect {
  done = false;
  sawUsage = false;
  private upstreamUsage: unknown;
  private usageChunk: Record<string, unknown> | undefined;
  private firstChunk: Record<string, unknown> | undefined;
  private readonly texts: string[] = [];

  constructor(
    private readonly model: string,
    private readonly clientWantsUsage: boolean,
    private readonly requestId: string,
    private readonly promptTokens: () => number,
    private readonly channel: ChannelRecord,
  ) {}

  onEvent(event: SseEvent): string | null {
    const data = event.data;
    if (data === null) return null;
    if (data.trim() === '[DONE]') {
      this.done = true;
      return null;
    }
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      throw new StreamEventError('the upstream sent a malformed event');
    }
    if (chunk === null || typeof chunk !== 'object') throw new StreamEventError('the upstream sent a malformed event');
    if (chunk.error !== undefined) {
      const message = (chunk.error as { message?: unknown } | null)?.message;
      throw new StreamEventError(
        typeof message === 'string' ? `upstream error: ${maskUpstreamText(message, this.channel)}` : 'the upstream reported an error',
      );
    }
    this.firstChunk ??= chunk;
    choiceTexts(chunk.choices, this.texts);
    let rewrite = false;
    if (chunk.usage !== undefined && chunk.usage !== null) {
      this.upstreamUsage = chunk.usage;
      this.sawUsage = true;
      if (Array.isArray(chunk.choices) && chunk.choices.length === 0) {
        this.usageChunk = chunk;
        return null;
      }
      delete chunk.usage;
      rewrite = true;
    }
    if (chunk.model !== this.model) {
      chunk.model = this.model;
      rewrite = true;
    }
    return `data: ${rewrite ? JSON.stringify(chunk) : data}\n\n`;
  }

  usage() {
    return completeUsage(this.upstreamUsage, this.promptTokens, () => countDeliveredTokens(this.texts));
  }

  tail(): string {
    if (!this.clientWantsUsage) return 'data: [DONE]\n\n';
    const chunk = this.usageChunk ?? {
      id: this.firstChunk?.id ?? `cmpl-${this.requestId}`,
      object: 'text_completion',
      created: this.firstChunk?.created ?? Math.floor(Date.now() / 1000),
      choices: [],
    };
    chunk.model = this.model;
    chunk.usage = this.usage();
    return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
  }

  errorTail(error: AppError): string {
    return `data: ${JSON.stringify(toOpenAI(error, this.requestId).body)}\n\ndata: [DONE]\n\n`;
  }
}
