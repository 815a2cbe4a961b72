import type { RerankBody } from '@modelgate/schemas/relay';
import type { Metering } from '../../features/billing/pricing';
import type { RelayCall } from '../../features/relay/relay-call';
import { estimateTextTokens, reportedTokenCount } from '../../features/relay/tokens';
import { objectOf } from '../../core/json';
import { ClientBody } from '../../dialects/client-body';
import { rerankTexts } from '../../dialects/openai/media-requests';
import { type MediaAnswerReader, PassThroughMediaCall, type ReportedTokens } from '../media';

/** Jina reports the tokens it read (`usage.total_tokens`); Cohere reports search units, priced per request here. */
class RerankAnswerReader implements MediaAnswerReader {
  tokens: ReportedTokens | undefined;

  json(answer: Record<string, unknown>): void {
    const read = reportedTokenCount(objectOf(answer.usage).total_tokens);
    if (read !== undefined) this.tokens = { promptTokens: read, completionTokens: 0 };
  }

  metered(): undefined {
    return undefined;
  }
}

/**
 * `POST /v1/rerank` (docs/api.md 2.13, Jina / Cohere): passed through to OpenAI-compatible channels
 * at `{base_url}/v1/rerank`; priced by the tokens reported where the model has a ModelRatio, else
 * per request (docs/api.md 2.14).
 */
export class RerankCall extends PassThroughMediaCall {
  readonly surface = 'rerank' as const;
  readonly model: string;
  readonly stream = false;
  readonly estimate: RelayCall['estimate'];
  readonly metering: Metering = { unit: 'request', tokenPriced: true, estimate: { units: 1, billed: { requests: 1 } } };
  protected readonly client: ClientBody;

  constructor(body: RerankBody, raw: Buffer) {
    super();
    this.model = body.model;
    // A reranker reads the query with every document.
    const [query = '', ...documents] = rerankTexts(body);
    let promptTokens = 0;
    for (const document of documents) promptTokens += estimateTextTokens(query) + estimateTextTokens(document);
    this.estimate = { promptTokens, completionTokens: 0 };
    this.client = new ClientBody(raw, body, false);
  }

  protected answerReader(): RerankAnswerReader {
    return new RerankAnswerReader();
  }
}
