import { AppError } from '@modelgate/errors';
import { CHANNEL_TYPES } from '@modelgate/schemas';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import { reportedTokenCount } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { EmbeddingRequest } from '../../providers/chat';
import { embeddingsResponseToOpenAI } from '../../providers/openai/embeddings';
import type { Provider } from '../../providers/provider';
import { providerFor } from '../../providers/registry';
import { jsonPost } from '../../providers/upstream-call';
import { PassThroughBody } from '../openai-pass-through';
import { countEmbeddingsPromptTokens, embeddingRequestOf, estimateEmbeddings, parseEmbeddingsRequest } from './request';

type EmbeddingsBody = ReturnType<typeof parseEmbeddingsRequest>;

/** Routing sends embeddings only to types that have them (channel-types surfaces). */
function embeddingsOf(provider: Provider): NonNullable<Provider['embeddings']> {
  if (!provider.embeddings) throw new AppError('internal_error', `channel type ${provider.facts.type} has no embeddings`);
  return provider.embeddings;
}

/**
 * `POST /v1/embeddings` (docs/api.md 2.8): passed through to OpenAI-compatible channels, through
 * `batchEmbedContents` on Gemini ones; charged on prompt tokens.
 */
export class EmbeddingsCall implements RelayCall {
  readonly surface = 'embeddings' as const;
  readonly stream = false;
  readonly model: string;
  readonly estimate: RelayCall['estimate'];
  private readonly passThroughBody: PassThroughBody;
  private internal: EmbeddingRequest | undefined;

  constructor(private readonly body: EmbeddingsBody, raw: Buffer) {
    this.model = body.model;
    this.estimate = estimateEmbeddings(body);
    this.passThroughBody = new PassThroughBody(raw, body, false, false);
  }

  promptTokens(): number {
    return countEmbeddingsPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string) {
    if (channel.dialect === 'openai') {
      return jsonPost(CHANNEL_TYPES[channel.type], channel, '/v1/embeddings', this.passThroughBody.for(upstreamModel));
    }
    this.internal ??= embeddingRequestOf(this.body);
    return embeddingsOf(providerFor(channel)).request(channel, upstreamModel, this.internal);
  }

  async deliver(upstream: UpstreamResponse, { res, signal, startedAt, channel }: DeliveryContext): Promise<Delivery> {
    const answer = answerObjectOf(await readBody(upstream, signal));
    let promptTokens: number;
    let text: string;
    if (channel.dialect === 'openai') {
      const usage = (answer.usage ?? {}) as { prompt_tokens?: unknown; total_tokens?: unknown };
      promptTokens = reportedTokenCount(usage.prompt_tokens) ?? this.promptTokens();
      answer.model = this.model;
      answer.usage = { ...usage, prompt_tokens: promptTokens, total_tokens: reportedTokenCount(usage.total_tokens) ?? promptTokens };
      text = JSON.stringify(answer);
    } else {
      const response = embeddingsOf(providerFor(channel)).response(answer);
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
