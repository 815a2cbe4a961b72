import { type AppError, toOpenAI } from '@modelgate/errors';
import { type BilledStreamDialect, deliverEventStream, eventObjectOf, reportedStreamError } from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext } from '../../features/relay/relay-call';
import { countDeliveredTokens } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { SseEvent } from '../../core/provider';
import type { ChatUsage } from '../../core/chat';
import { chargedUsageOf, completeUsage, type CompletionUsage } from '../../providers/openai/usage';
import { nowSeconds } from '../../core/time';
import { ClientBody } from '../client-body';

/**
 * What sets one OpenAI surface apart in a pass-through: completions and chat completions differ
 * only in where their text is and what their objects are called.
 */
export interface OpenAISurface {
  /** `object` of a usage chunk the relay has to make up (`text_completion`, `chat.completion.chunk`). */
  chunkObject: string;
  /** Prefix of a made-up chunk id. */
  idPrefix: string;
  /** The generated text of an answer's or a chunk's `choices` (for counting when no usage came). */
  textsOf(choices: unknown, into: string[]): void;
}

/** An OpenAI request body, as a pass-through reads it. */
type PassedBody = Record<string, unknown> & {
  model: string;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
};

/**
 * One OpenAI-dialect call served by a channel that speaks it: passed through untouched
 * (docs/api.md 2.6) apart from `model` and `usage`.
 */
export class OpenAIPassThrough {
  /** The model the client asked for: what it sees in every answer. */
  readonly model: string;
  readonly stream: boolean;
  readonly clientWantsUsage: boolean;
  readonly body: ClientBody;

  constructor(
    readonly surface: OpenAISurface,
    body: PassedBody,
    raw: Buffer,
    readonly requestId: string,
    /** The prompt's tokens as charged when the upstream reports none. */
    readonly promptTokens: () => number,
  ) {
    this.model = body.model;
    this.stream = body.stream === true;
    this.clientWantsUsage = body.stream_options?.include_usage === true;
    this.body = new ClientBody(raw, body, this.stream, { addStreamUsage: !this.clientWantsUsage });
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.stream
      ? deliverEventStream(upstream, context, new OpenAIPassThroughStream(this))
      : deliverWholeOpenAI(upstream, context, this);
  }
}

/** A whole OpenAI answer: one parse, `model` and `usage` rewritten, one stringify. */
async function deliverWholeOpenAI(
  upstream: UpstreamResponse,
  { res, signal, startedAt }: DeliveryContext,
  pass: OpenAIPassThrough,
): Promise<Delivery> {
  const answer = answerObjectOf(await readBody(upstream, signal));
  answer.model = pass.model;
  const usage = completeUsage(answer.usage, pass.promptTokens, () => {
    const texts: string[] = [];
    pass.surface.textsOf(answer.choices, texts);
    return countDeliveredTokens(texts);
  });
  answer.usage = usage;
  const text = JSON.stringify(answer);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  return { usage: chargedUsageOf(usage), firstByteMs: Date.now() - startedAt, billable: true };
}

/** OpenAI chunks passed on: model rewritten, usage chunk only when asked for, always `[DONE]`. */
class OpenAIPassThroughStream implements BilledStreamDialect {
  done = false;
  sawUsage = false;
  private upstreamUsage: unknown;
  private usageChunk: Record<string, unknown> | undefined;
  private firstChunk: Record<string, unknown> | undefined;
  private readonly texts: string[] = [];

  constructor(private readonly pass: OpenAIPassThrough) {}

  onEvent(event: SseEvent): string | null {
    const data = event.data;
    if (data === null) return null;
    if (data.trim() === '[DONE]') {
      this.done = true;
      return null;
    }
    const chunk = eventObjectOf(data);
    if (chunk.error !== undefined && chunk.error !== null) throw reportedStreamError(chunk.error);
    this.firstChunk ??= chunk;
    this.pass.surface.textsOf(chunk.choices, this.texts);
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
    if (chunk.model !== this.pass.model) {
      chunk.model = this.pass.model;
      rewrite = true;
    }
    return `data: ${rewrite ? JSON.stringify(chunk) : data}\n\n`;
  }

  private usage(): CompletionUsage {
    return completeUsage(this.upstreamUsage, this.pass.promptTokens, () => countDeliveredTokens(this.texts));
  }

  billedUsage(): ChatUsage {
    return chargedUsageOf(this.usage());
  }

  tail(): string {
    if (!this.pass.clientWantsUsage) return 'data: [DONE]\n\n';
    const chunk = this.usageChunk ?? {
      id: this.firstChunk?.id ?? `${this.pass.surface.idPrefix}-${this.pass.requestId}`,
      object: this.pass.surface.chunkObject,
      created: this.firstChunk?.created ?? nowSeconds(),
      choices: [],
    };
    chunk.model = this.pass.model;
    chunk.usage = this.usage();
    return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
  }

  errorTail(error: AppError): string {
    return `data: ${JSON.stringify(toOpenAI(error, this.pass.requestId).body)}\n\ndata: [DONE]\n\n`;
  }
}
