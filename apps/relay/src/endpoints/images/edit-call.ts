import type { ImageEditFields } from '@modelgate/schemas/relay';
import type { Metering } from '../../features/billing/pricing';
import type { RelayCall } from '../../features/relay/relay-call';
import type { MultipartUpload } from '../../features/upload/multipart-upload';
import { DEFAULT_IMAGE_MODEL, estimateImages, type ImageAsk, imageUnits } from '../../dialects/openai/media-requests';
import { PassThroughMediaCall, UploadRequest } from '../media';
import { ImagesAnswerReader } from './answer-reader';

/**
 * `POST /v1/images/edits` (docs/api.md 2.13, multipart): the upload streamed to OpenAI and Azure
 * channels; priced by the tokens reported, else per image (docs/api.md 2.14).
 */
export class ImageEditCall extends PassThroughMediaCall {
  readonly surface = 'image_edits' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  readonly metering: Metering;
  protected readonly client: UploadRequest;
  private readonly ask: ImageAsk;

  constructor(upload: MultipartUpload, fields: ImageEditFields) {
    super();
    this.model = fields.model ?? DEFAULT_IMAGE_MODEL;
    this.stream = fields.stream === true;
    this.ask = { n: fields.n ?? 1, size: fields.size, quality: fields.quality };
    this.estimate = estimateImages(this.model, fields.prompt, this.ask);
    this.metering = { unit: 'image', tokenPriced: true, estimate: { units: imageUnits(this.ask), billed: { images: this.ask.n } } };
    this.client = new UploadRequest(upload, this.stream);
  }

  protected answerReader(): ImagesAnswerReader {
    return new ImagesAnswerReader(this.ask, 'image_edit.completed');
  }
}
