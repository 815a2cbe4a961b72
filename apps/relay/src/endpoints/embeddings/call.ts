import { AppError } from '@modelgate/errors';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import { reportedTokenCount } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { EmbeddingRequest } from '../../core/chat';
import { embeddingsResponseToOpenAI } from '../../dialects/openai/embeddings-from-internal';
import type { Provider, UpstreamCall } from '../../core/provider';
import { ClientBody } from '../../dialects/client-body';
import { servedNatively } from '../../dialects/native';
import { countEmbeddingsPromptTokens, embeddingRequestOf, estimateEmbeddings, parseEmbeddingsRequest } from '../../dialects/openai/embeddings-request';

type EmbeddingsBody = ReturnType<typeof parseEmbeddingsRequest>;

/** Routing sends embeddings only to types that have them (channel-types surfaces). */
function embeddingsOf(provider: Provider): NonNullable<Provider['embeddings']> {
  if (!provider.embeddings) throw new AppError('internal_error', `channel type ${provider.facts.type} has no embeddings`);
  return provider.embeddings;
}

/**
 * `POST /v1/embeddings` (docs/api.md 2.8): passed through to channels that speak OpenAI's
 * embeddings, through the provider's own embeddings elsewhere; charged on prompt tokens.
 */
export class EmbeddingsCall implements RelayCall {
  readonly surface = 'embeddings' as const;
  readonly stream = false;
  readonly model: string;
  readonly estimate: RelayCall['estimate'];
  private readonly clientBody: ClientBody;
  private internal: EmbeddingRequest | undefined;

  constructor(private readonly body: EmbeddingsBody, raw: Buffer) {
    this.model = body.model;
    this.estimate = estimateEmbeddings(body);
    this.clientBody = new ClientBody(raw, body, false);
  }

  promptTokens(): number {
    return countEmbeddingsPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('embeddings', channel, upstreamModel);
    if (native) return native(this.clientBody);
    this.internal ??= embeddingRequestOf(this.body);
    return embeddingsOf(provider).request(channel, upstreamModel, this.internal);
  }

  async deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const { res, signal, startedAt, provider } = context;
    const answer = answerObjectOf(await readBody(upstream, signal));
    let promptTokens: number;
    let text: string;
    if (servedNatively('embeddings', context)) {
      const usage = (answer.usage ?? {}) as { prompt_tokens?: unknown; total_tokens?: unknown };
      promptTokens = reportedTokenCount(usage.prompt_tokens) ?? this.promptTokens();
      answer.model = this.model;
      answer.usage = { ...usage, prompt_tokens: promptTokens, total_tokens: reportedTokenCount(usage.total_tokens) ?? promptTokens };
      text = JSON.stringify(answer);
    } else {
      const response = embeddingsOf(provider).response(answer);
      promptTokens = response.promptTokens ?? this.promptTokens();
      text = JSON.stringify(embeddingsResponseToOpenAI(response, this.model, this.body.encoding_format ?? 'float', promptTokens));
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return {
      usage: { promptTokens, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
      firstByteMs: Date.now() - startedAt,
      billable: true,
    };
  }
}
