import type { AppError } from '@modelgate/errors';
import type { ChannelRecord } from '../features/channels/channel-cache';
import { type BilledStreamDialect, billedUsageOf, deliverEventStream, StreamEventError } from '../features/relay/event-stream';
import type { Delivery, DeliveryContext } from '../features/relay/relay-call';
import { countDeliveredTokens } from '../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../features/upstream/client';
import type { SseEvent } from '../core/provider';
import type { ChatRequest, ChatResponse, ChatStreamEvent, ChatUsage, ContentPart } from '../core/chat';
import type { ChatStreamDecoder, ChatWire, Provider, UpstreamCall } from '../core/provider';

/** Writes internal stream events in a client's dialect, each at once (nothing held back). */
export interface ChatStreamEncoder {
  /** The client bytes for one event ('' when it produces none). */
  encode(event: ChatStreamEvent): string;
  /** After the last event of a stream that ended normally. */
  tail(usage: ChatUsage): string;
  /** When the upstream failed after the client's first byte. */
  errorTail(error: AppError): string;
  /** Usage merged from the `usage` events it saw. */
  usage(): Partial<ChatUsage>;
  /** Every generated piece sent (text, reasoning, tool names and arguments), for counting. */
  deliveredText(): string[];
}

/** The generated pieces of an answer, for counting when the provider reported no usage. */
function generatedPieces(response: ChatResponse): string[] {
  const pieces: string[] = [];
  const add = (part: ContentPart) => {
    if (part.type === 'text' || part.type === 'reasoning') pieces.push(part.text);
    else if (part.type === 'tool_call') pieces.push(part.name, part.arguments);
  };
  for (const choice of response.choices) choice.content.forEach(add);
  return pieces;
}

const NO_CACHE = { cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

/**
 * A whole answer of another dialect: decoded by the channel's provider, encoded for the client.
 * Without provider usage, the prompt and the generated text are counted (docs/api.md 2.5).
 */
async function deliverTranslatedWhole(
  upstream: UpstreamResponse,
  { res, signal, startedAt }: DeliveryContext,
  wire: ChatWire,
  encode: (response: ChatResponse, usage: ChatUsage) => unknown,
  promptTokens: () => number,
): Promise<Delivery> {
  const response = wire.response(answerObjectOf(await readBody(upstream, signal)));
  const usage = response.usage ?? {
    ...NO_CACHE,
    promptTokens: promptTokens(),
    completionTokens: countDeliveredTokens(generatedPieces(response)),
  };
  const text = JSON.stringify(encode(response, usage));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  return { usage, firstByteMs: Date.now() - startedAt, billable: true };
}

/**
 * A stream of another dialect: each upstream event decoded by the channel's provider and written
 * in the client's dialect as it arrives.
 */
class TranslatedChatStream implements BilledStreamDialect {
  sawUsage = false;
  private billed: ChatUsage | undefined;

  constructor(
    private readonly decoder: ChatStreamDecoder,
    private readonly encoder: ChatStreamEncoder,
    private readonly promptTokens: () => number,
  ) {}

  get done(): boolean {
    return this.decoder.done;
  }

  onEvent(event: SseEvent): string | null {
    let text = '';
    for (const internal of this.decoder.decode(event)) {
      // A prompt count alone (Anthropic's message_start) comes before anything was generated.
      if (internal.type === 'usage' && internal.usage.completionTokens !== undefined) this.sawUsage = true;
      text += this.encoder.encode(internal);
    }
    return text === '' ? null : text;
  }

  /** The provider's counts, completed by counting (see billedUsageOf). */
  billedUsage(cut: boolean): ChatUsage {
    this.billed ??= billedUsageOf(this.encoder.usage(), cut, () => this.encoder.deliveredText(), this.promptTokens);
    return this.billed;
  }

  tail(): string {
    // The client's normal finish would pass a cut answer off as whole (docs/api.md 2.6).
    if (!this.decoder.complete) throw new StreamEventError('the upstream stream ended before the answer was complete');
    return this.encoder.tail(this.billedUsage(false));
  }

  errorTail(error: AppError): string {
    return this.encoder.errorTail(error);
  }
}

function wireOf({ provider, channel, upstreamModel }: DeliveryContext): ChatWire {
  return provider.chat(channel, upstreamModel);
}

/**
 * The translated side of a surface (docs/api.md 2.6): the client's request converted into the
 * internal form once, on the first attempt on a channel of another dialect; each such channel's
 * provider writes its request and reads its answer, which the client gets in its own dialect.
 */
export class ChatTranslation {
  private internal: ChatRequest | undefined;

  constructor(
    private readonly toInternal: () => ChatRequest,
    /** The prompt's tokens as charged when the upstream reports none. */
    private readonly promptTokens: () => number,
  ) {}

  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    this.internal ??= this.toInternal();
    return provider.chat(channel, upstreamModel).request(this.internal);
  }

  /** A whole answer, written for the client by `encode`. */
  deliverWhole(upstream: UpstreamResponse, context: DeliveryContext, encode: (response: ChatResponse, usage: ChatUsage) => unknown): Promise<Delivery> {
    return deliverTranslatedWhole(upstream, context, wireOf(context), encode, this.promptTokens);
  }

  /** A stream, each event written for the client by `encoder` as it arrives. */
  deliverStream(upstream: UpstreamResponse, context: DeliveryContext, encoder: ChatStreamEncoder): Promise<Delivery> {
    return deliverEventStream(upstream, context, new TranslatedChatStream(wireOf(context).stream(), encoder, this.promptTokens));
  }
}
