import { type AppError, toGoogle } from '@modelgate/errors';
import type { ChatUsage } from '../../core/chat';
import type { SseEvent } from '../../core/provider';
import { type OfferedTool, withServerToolCalls } from '../../features/billing/pricing';
import { eventObjectOf, isBillable, relayEventStream, reportedStreamError, type StreamDialect } from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext } from '../../features/relay/relay-call';
import { countDeliveredTokens } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import { usageOf } from '../../providers/gemini/usage';
import { GroundingCounter } from './server-tools';

/**
 * What a Gemini answer is billed for (docs/api.md 2.5, 2.6): the provider's `usageMetadata`, read
 * as every Gemini surface reads it; without believable metadata, our own counts of the prompt and
 * the delivered text (they know of no cache or thoughts).
 */
function billedUsageOf(metadata: unknown, promptTokens: () => number, texts: () => string[]): ChatUsage {
  return usageOf(metadata) ?? { promptTokens: promptTokens(), completionTokens: countDeliveredTokens(texts()), cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

function collectTexts(response: { candidates?: unknown }, into: string[]): void {
  if (!Array.isArray(response.candidates)) return;
  for (const candidate of response.candidates) {
    const parts = (candidate as { content?: { parts?: unknown } } | null)?.content?.parts;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const text = (part as { text?: unknown } | null)?.text;
      if (typeof text === 'string' && text.length > 0) into.push(text);
    }
  }
}

const JSON_CONTENT_TYPE = 'application/json; charset=UTF-8';

/** A Gemini answer from a channel that speaks Gemini (docs/api.md 2.3): the upstream's bytes as they are. */
export class GeminiPassThrough {
  constructor(
    /** The server tools the request offers, whose grounding the answer shows. */
    private readonly serverTools: readonly OfferedTool[],
    private readonly promptTokens: () => number,
  ) {}

  deliver(upstream: UpstreamResponse, context: DeliveryContext, stream: boolean): Promise<Delivery> {
    return stream ? this.deliverStream(upstream, context) : this.deliverWhole(upstream, context);
  }

  /** Parsed only to read `usageMetadata` and grounding. */
  private async deliverWhole(upstream: UpstreamResponse, { res, signal, startedAt }: DeliveryContext): Promise<Delivery> {
    const raw = await readBody(upstream, signal);
    const response: { usageMetadata?: unknown; candidates?: unknown } = answerObjectOf(raw);
    res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'content-length': raw.length });
    res.end(raw);
    const usage = billedUsageOf(response.usageMetadata, this.promptTokens, () => {
      const texts: string[] = [];
      collectTexts(response, texts);
      return texts;
    });
    const grounding = new GroundingCounter(this.serverTools);
    grounding.add(response.candidates);
    withServerToolCalls(usage, grounding.counted());
    return { usage, firstByteMs: Date.now() - startedAt, billable: true };
  }

  private async deliverStream(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const dialect = new GeminiStreamDialect(new GroundingCounter(this.serverTools));
    const result = await relayEventStream(upstream, context, dialect);
    const usage = billedUsageOf(dialect.metadata, this.promptTokens, () => dialect.texts);
    withServerToolCalls(usage, dialect.grounding.counted());
    const cut = result.clientAborted || result.failure !== undefined;
    return { usage, firstByteMs: result.firstByteMs, billable: isBillable(cut, usage), streamFailure: result.failure };
  }
}

/** Gemini SSE: each event passed on byte-for-byte; the last `usageMetadata` seen is the bill. */
class GeminiStreamDialect implements StreamDialect {
  readonly done = false;
  metadata: unknown;
  readonly texts: string[] = [];

  constructor(
    /** Fed each chunk's candidates only when the request offers a grounding tool. */
    readonly grounding: GroundingCounter,
  ) {}

  onEvent(event: SseEvent): string | null {
    if (event.data === null) return event.raw;
    const chunk: { usageMetadata?: unknown; candidates?: unknown; error?: unknown } = eventObjectOf(event.data);
    if (chunk.error !== undefined && chunk.error !== null) throw reportedStreamError(chunk.error);
    if (chunk.usageMetadata) this.metadata = chunk.usageMetadata;
    collectTexts(chunk, this.texts);
    if (this.grounding.counts) this.grounding.add(chunk.candidates);
    return event.raw;
  }

  tail(): string {
    return '';
  }

  errorTail(error: AppError): string {
    return `data: ${JSON.stringify(toGoogle(error).body)}\r\n\r\n`;
  }
}
