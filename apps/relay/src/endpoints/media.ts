import { AppError } from '@modelgate/errors';
import type { MediaSurface } from '@modelgate/schemas';
import type { ChannelRecord } from '../features/channels/channel-cache';
import { type MediaAnswerResult, relayMediaAnswer, type AnswerReader } from '../features/relay/media-answer';
import type { MeteredUse, Metering } from '../features/billing/pricing';
import type { Delivery, DeliveryContext, RelayCall } from '../features/relay/relay-call';
import { reportedTokenCount } from '../features/relay/tokens';
import type { MultipartUpload } from '../features/upload/multipart-upload';
import type { UpstreamResponse } from '../features/upstream/client';
import { objectOf } from '../core/json';
import type { ClientRequest, Provider, UpstreamBody, UpstreamCall } from '../core/provider';

/** Tokens an OpenAI media answer reports (`usage.input_tokens` / `output_tokens`), when it reports both. */
export interface ReportedTokens {
  promptTokens: number;
  completionTokens: number;
}

export function reportedMediaTokens(usage: unknown): ReportedTokens | undefined {
  const { input_tokens: input, output_tokens: output } = objectOf(usage);
  const promptTokens = reportedTokenCount(input);
  const completionTokens = reportedTokenCount(output);
  return promptTokens === undefined || completionTokens === undefined ? undefined : { promptTokens, completionTokens };
}

/** Units rounded to 1e-6, so that a log row reads `1.016667 x USD 0.006 per minute`, not a float's tail. */
export function roundedUnits(units: number): number {
  return Math.round(units * 1e6) / 1e6;
}

/**
 * What a media answer is billed for (docs/api.md 2.14): the tokens it reported, else its units
 * (`metered`: the answer's, when it tells more than the request). A client that got nothing of
 * the answer is not charged; one that got part of a streamed answer is (it was generated).
 */
export function mediaDelivery(result: MediaAnswerResult, tokens: ReportedTokens | undefined, metered: MeteredUse | undefined): Delivery {
  return {
    usage: {
      promptTokens: tokens?.promptTokens ?? 0,
      completionTokens: tokens?.completionTokens ?? 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
    firstByteMs: result.firstByteMs,
    billable: result.firstByteMs !== null,
    tokensReported: tokens !== undefined,
    metered,
  };
}

/** A multipart upload as the channels of the client's dialect receive it: streamed, `model` mapped. */
export class UploadRequest implements ClientRequest {
  readonly json: Readonly<Record<string, unknown>>;

  constructor(
    private readonly upload: MultipartUpload,
    readonly stream: boolean,
  ) {
    this.json = Object.fromEntries(upload.fields);
  }

  bodyFor(upstreamModel: string): UpstreamBody {
    return this.upload.body(upstreamModel);
  }
}

/**
 * A media call the channels serve in OpenAI's own dialect (docs/api.md 2.13): the client's request
 * passed through (model mapped), the answer relayed untouched while `reader` reads what it reports.
 */
export abstract class PassThroughMediaCall implements RelayCall {
  abstract readonly surface: MediaSurface;
  abstract readonly model: string;
  abstract readonly stream: boolean;
  abstract readonly estimate: RelayCall['estimate'];
  abstract readonly metering: Metering;
  protected abstract readonly client: ClientRequest;

  promptTokens(): number {
    return this.estimate.promptTokens;
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native(this.surface, channel, upstreamModel);
    // Routing only picks channels whose type serves the surface (channel-types surfaces).
    if (!native) throw new AppError('internal_error', `channel type ${provider.facts.type} cannot serve ${this.surface}`);
    return native(this.client);
  }

  async deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const reader = this.answerReader();
    const result = await relayMediaAnswer(upstream, context, reader, this.model);
    return mediaDelivery(result, reader.tokens, await reader.metered());
  }

  /** Reads one answer (a fresh one per attempt). */
  protected abstract answerReader(): MediaAnswerReader;
}

/** What one media answer reported, as read on its way to the client. */
export interface MediaAnswerReader extends AnswerReader {
  readonly tokens: ReportedTokens | undefined;
  /** The units the answer showed; undefined: the request's estimate stands. */
  metered(): Promise<MeteredUse | undefined> | MeteredUse | undefined;
}
