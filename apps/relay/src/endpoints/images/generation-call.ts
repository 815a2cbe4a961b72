import { AppError } from '@modelgate/errors';
import type { ImageGenerationBody } from '@modelgate/schemas/relay';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Metering } from '../../features/billing/pricing';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { ImageResponse } from '../../core/media';
import type { Provider, UpstreamCall } from '../../core/provider';
import { ClientBody } from '../../dialects/client-body';
import { servedNatively } from '../../dialects/native';
import { DEFAULT_IMAGE_MODEL, estimateImages, type ImageAsk, imageUnits } from '../../dialects/openai/media-requests';
import { mediaDelivery, PassThroughMediaCall } from '../media';
import { ImagesAnswerReader } from './answer-reader';

/** Routing sends image calls only to types that pass them through or translate them (channel-types surfaces). */
function imagesOf(provider: Provider): NonNullable<Provider['images']> {
  if (!provider.images) throw new AppError('internal_error', `channel type ${provider.facts.type} has no image generation`);
  return provider.images;
}

/** OpenAI's images answer for a translated one: the images as `b64_json`, and the tokens reported. */
function imagesAnswerOf(response: ImageResponse): Record<string, unknown> {
  const answer: Record<string, unknown> = {
    created: Math.floor(Date.now() / 1000),
    data: response.images.map((image) => ({ b64_json: image.b64 })),
    output_format: response.images[0]?.mediaType.replace(/^image\//, ''),
  };
  const usage = response.usage;
  if (usage) {
    answer.usage = {
      input_tokens: usage.promptTokens,
      output_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
    };
  }
  return answer;
}

/**
 * `POST /v1/images/generations` (docs/api.md 2.13): passed through to OpenAI and Azure channels;
 * a Gemini image model is asked through its provider's translation and answered as `b64_json`.
 * Priced by the tokens reported, else per image (docs/api.md 2.14).
 */
export class ImageGenerationCall extends PassThroughMediaCall {
  readonly surface = 'images' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  readonly metering: Metering;
  protected readonly client: ClientBody;
  private readonly ask: ImageAsk;

  constructor(
    private readonly body: ImageGenerationBody,
    raw: Buffer,
  ) {
    super();
    this.model = body.model ?? DEFAULT_IMAGE_MODEL;
    this.stream = body.stream === true;
    this.ask = { n: body.n ?? 1, size: body.size, quality: body.quality };
    this.estimate = estimateImages(this.model, body.prompt, this.ask);
    this.metering = { unit: 'image', tokenPriced: true, estimate: { units: imageUnits(this.ask), billed: { images: this.ask.n } } };
    this.client = new ClientBody(raw, body, this.stream);
  }

  override upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    if (provider.native('images', channel, upstreamModel)) return super.upstreamRequest(channel, upstreamModel, provider);
    if (this.stream) throw new AppError('invalid_request', `model ${this.model} cannot stream images`, { param: 'stream' });
    const { prompt, size, quality } = this.body;
    return imagesOf(provider).request(channel, upstreamModel, { prompt, n: this.ask.n, size: size ?? undefined, quality: quality ?? undefined });
  }

  override deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return servedNatively('images', context) ? super.deliver(upstream, context) : this.deliverTranslated(upstream, context);
  }

  protected answerReader(): ImagesAnswerReader {
    return new ImagesAnswerReader(this.ask, 'image_generation.completed');
  }

  private async deliverTranslated(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const response = imagesOf(context.provider).response(answerObjectOf(await readBody(upstream, context.signal)));
    const text = JSON.stringify(imagesAnswerOf(response));
    context.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    context.res.end(text);
    const images = response.images.length;
    return mediaDelivery({ firstByteMs: Date.now() - context.startedAt, cut: false }, response.usage, {
      units: imageUnits({ ...this.ask, n: images }),
      billed: { images },
    });
  }
}
