import { AppError, toGoogle } from '@modelgate/errors';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import { eventObjectOf, isBillable, relayEventStream, reportedStreamError, type StreamDialect } from '../../features/relay/event-stream';
import type { ChatUsage } from '../../core/chat';
import { type OfferedTool, withServerToolCalls } from '../../features/billing/pricing';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import { countDeliveredTokens, reportedTokenCount, reportedTokenSum } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { SseEvent } from '../../core/provider';
import { GroundingCounter, geminiServerTools } from '../../providers/gemini/server-tools';
import type { Provider, UpstreamCall } from '../../core/provider';
import { ClientBody } from '../client-body';
import { countPromptTokens, estimateGenerateContent, type GenerateContentRequest } from './request';

interface UsageMetadata {
  promptTokenCount?: unknown;
  toolUsePromptTokenCount?: unknown;
  cachedContentTokenCount?: unknown;
  candidatesTokenCount?: unknown;
  thoughtsTokenCount?: unknown;
}

/**
 * TTS audio and thinking are output: `candidatesTokenCount` + `thoughtsTokenCount` (docs/api.md 2.5).
 * Without metadata, or with counts that are not believable, our own counts are charged: the
 * prompt and the delivered text, tokenized. The prompt count includes `cachedContentTokenCount`,
 * priced apart (docs/api.md 2.11); our own counts know of no cache or thoughts.
 */
function usageOf(metadata: UsageMetadata | undefined, promptTokens: () => number, texts: () => string[]): ChatUsage {
  const reportedPrompt = metadata && reportedTokenSum(metadata.promptTokenCount, metadata.toolUsePromptTokenCount);
  const reportedCompletion = metadata && reportedTokenSum(metadata.candidatesTokenCount, metadata.thoughtsTokenCount);
  return {
    promptTokens: reportedPrompt ?? promptTokens(),
    completionTokens: reportedCompletion ?? countDeliveredTokens(texts()),
    cachedTokens: reportedPrompt === undefined ? 0 : (reportedTokenCount(metadata?.cachedContentTokenCount) ?? 0),
    cacheWriteTokens: 0,
    reasoningTokens: reportedCompletion === undefined ? 0 : (reportedTokenCount(metadata?.thoughtsTokenCount) ?? 0),
  };
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

/** Gemini `generateContent` / `streamGenerateContent` through a Gemini channel (docs/api.md 2.3). */
export class GeminiCall implements RelayCall {
  readonly surface = 'gemini' as const;

  readonly estimate: RelayCall['estimate'];
  readonly serverTools: OfferedTool[];
  private readonly clientBody: ClientBody;

  constructor(
    raw: Buffer,
    private readonly body: GenerateContentRequest,
    readonly model: string,
    readonly stream: boolean,
  ) {
    this.clientBody = new ClientBody(raw, body as Record<string, unknown>, stream, { modelInPath: true });
    this.estimate = estimateGenerateContent(body);
    this.serverTools = geminiServerTools((body as { tools?: unknown }).tools);
  }

  promptTokens(): number {
    return countPromptTokens(this.body);
  }

  /** The client's body byte-for-byte (TTS `speechConfig` included); routing sends it only to channels that speak it. */
  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('gemini', channel, upstreamModel);
    if (!native) throw new AppError('internal_error', `channel ${channel.id} does not serve generateContent for ${upstreamModel}`);
    return native(this.clientBody);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.stream ? this.deliverStream(upstream, context) : this.deliverWhole(upstream, context);
  }

  /** The upstream body as is; parsed only to read `usageMetadata`. */
  private async deliverWhole(upstream: UpstreamResponse, { res, signal, startedAt }: DeliveryContext): Promise<Delivery> {
    const raw = await readBody(upstream, signal);
    const response: { usageMetadata?: UsageMetadata; candidates?: unknown } = answerObjectOf(raw);
    res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'content-length': raw.length });
    res.end(raw);
    const usage = usageOf(response.usageMetadata, () => this.promptTokens(), () => {
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
    const usage = usageOf(dialect.metadata, () => this.promptTokens(), () => dialect.texts);
    withServerToolCalls(usage, dialect.grounding.counted());
    const cut = result.clientAborted || result.failure !== undefined;
    return {
      usage,
      firstByteMs: result.firstByteMs,
      billable: isBillable(cut, usage),
      streamFailure: result.failure,
    };
  }
}

/** Gemini SSE: each event passed on byte-for-byte; the last `usageMetadata` seen is the bill. */
class GeminiStreamDialect implements StreamDialect {
  readonly done = false;
  metadata: UsageMetadata | undefined;
  readonly texts: string[] = [];

  constructor(
    /** Fed each chunk's candidates only when the request offers a grounding tool. */
    readonly grounding: GroundingCounter,
  ) {}

  onEvent(event: SseEvent): string | null {
    if (event.data === null) return event.raw;
    const chunk: { usageMetadata?: UsageMetadata; candidates?: unknown; error?: unknown } = eventObjectOf(event.data);
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
