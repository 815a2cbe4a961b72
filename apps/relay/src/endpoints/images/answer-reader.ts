import type { MeteredUse } from '../../features/billing/pricing';
import { jsonObjectIn } from '../../core/json';
import type { SseEvent } from '../../core/provider';
import { type ImageAsk, imageUnits } from '../../dialects/openai/media-requests';
import { type MediaAnswerReader, type ReportedTokens, reportedMediaTokens } from '../media';

/**
 * Reads an OpenAI images answer: the tokens a gpt-image model reports (in the answer, or summed over
 * the completed events of a stream) and how many images came, priced at the request's units each.
 */
export class ImagesAnswerReader implements MediaAnswerReader {
  tokens: ReportedTokens | undefined;
  private images: number | undefined;

  constructor(
    private readonly ask: ImageAsk,
    /** The stream event that carries one finished image and its usage. */
    private readonly completedEvent: string,
  ) {}

  json(answer: Record<string, unknown>): void {
    this.tokens = reportedMediaTokens(answer.usage);
    if (Array.isArray(answer.data)) this.images = answer.data.length;
  }

  event(event: SseEvent): void {
    const data = event.data === null ? undefined : jsonObjectIn(event.data);
    if (data?.type !== this.completedEvent) return;
    this.images = (this.images ?? 0) + 1;
    const tokens = reportedMediaTokens(data.usage);
    if (!tokens) return;
    this.tokens = {
      promptTokens: (this.tokens?.promptTokens ?? 0) + tokens.promptTokens,
      completionTokens: (this.tokens?.completionTokens ?? 0) + tokens.completionTokens,
    };
  }

  metered(): MeteredUse | undefined {
    const images = this.images;
    return images === undefined ? undefined : { units: imageUnits({ ...this.ask, n: images }), billed: { images } };
  }
}
