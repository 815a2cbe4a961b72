import { CHANNEL_TYPES } from '@modelgate/schemas';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import { deliverEventStream } from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import type { UpstreamResponse } from '../../features/upstream/client';
import type { ChatRequest } from '../../providers/chat';
import { chatRequestFromOpenAI } from '../../providers/openai/chat-request';
import { chatResponseToOpenAI } from '../../providers/openai/chat-response';
import { OpenAIChatChunkEncoder } from '../../providers/openai/chat-stream';
import { providerFor } from '../../providers/registry';
import { deliverWholeOpenAI, type OpenAIPassThrough, OpenAIPassThroughStream, PassThroughBody } from '../openai-pass-through';
import { deliverTranslatedWhole, TranslatedChatStream } from '../translated';
import { type ChatCompletionBody, countChatPromptTokens, estimateChat } from './request';
import { chatChoiceTexts } from './texts';

/**
 * `POST /v1/chat/completions` (docs/api.md 2.7) on any channel that can answer chat: passed through
 * to OpenAI-compatible channels, translated through the internal form for the others (2.6).
 */
export class ChatCompletionCall implements RelayCall {
  readonly surface = 'chat' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  private readonly pass: OpenAIPassThrough;
  private readonly passThroughBody: PassThroughBody;
  /** Converted once, on the first translated attempt. */
  private internal: ChatRequest | undefined;

  constructor(
    private readonly body: ChatCompletionBody,
    raw: Buffer,
    private readonly requestId: string,
  ) {
    this.model = body.model;
    this.stream = body.stream === true;
    const clientWantsUsage = body.stream_options?.include_usage === true;
    this.estimate = estimateChat(body);
    this.pass = {
      model: this.model,
      chunkObject: 'chat.completion.chunk',
      idPrefix: 'chatcmpl',
      requestId,
      clientWantsUsage,
      textsOf: chatChoiceTexts,
      promptTokens: () => this.promptTokens(),
    };
    this.passThroughBody = new PassThroughBody(raw, body, this.stream, clientWantsUsage);
  }

  promptTokens(): number {
    return countChatPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string) {
    if (channel.dialect === 'openai') {
      return {
        path: `${channel.pathPrefix}/v1/chat/completions`,
        headers: { 'content-type': 'application/json', ...CHANNEL_TYPES[channel.type].authHeaders(channel.key) },
        body: this.passThroughBody.for(upstreamModel),
      };
    }
    this.internal ??= chatRequestFromOpenAI(this.body);
    return providerFor(channel).chatRequest(channel, upstreamModel, this.internal);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const { channel } = context;
    if (channel.dialect === 'openai') {
      return this.stream
        ? deliverEventStream(upstream, context, new OpenAIPassThroughStream(this.pass))
        : deliverWholeOpenAI(upstream, context, this.pass);
    }
    const provider = providerFor(channel);
    if (!this.stream) {
      return deliverTranslatedWhole(upstream, context, provider, (response, usage) => chatResponseToOpenAI(response, this.model, usage), () =>
        this.promptTokens(),
      );
    }
    const encoder = new OpenAIChatChunkEncoder({ model: this.model, requestId: this.requestId, includeUsage: this.pass.clientWantsUsage });
    return deliverEventStream(upstream, context, new TranslatedChatStream(provider.chatStream(), encoder, () => this.promptTokens()));
  }
}
