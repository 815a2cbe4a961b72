import type { OfferedTool } from '../../features/billing/pricing';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import type { UpstreamResponse } from '../../features/upstream/client';
import type { Provider, UpstreamCall } from '../../core/provider';
import { servedNatively } from '../../dialects/native';
import { chatRequestFromOpenAI } from '../../dialects/openai/chat-to-internal';
import { chatResponseToOpenAI } from '../../dialects/openai/chat-from-internal';
import { OpenAIChatChunkEncoder } from '../../dialects/openai/chunk-encoder';
import { CHAT_WEB_SEARCH_TOOL, chatServerTools } from '../../dialects/openai/server-tools';
import { OpenAIPassThrough, type OpenAISurface } from '../../dialects/openai/pass-through';
import { ChatTranslation } from '../../dialects/translation';
import { type ChatCompletionBody, countChatPromptTokens, estimateChat } from '../../dialects/openai/chat-request';
import { chatChoiceTexts } from '../../dialects/openai/chat-texts';

const CHAT: OpenAISurface = { chunkObject: 'chat.completion.chunk', idPrefix: 'chatcmpl', textsOf: chatChoiceTexts };

/**
 * `POST /v1/chat/completions` (docs/api.md 2.7) on any channel that can answer chat: passed through
 * to channels that speak OpenAI chat, translated through the internal form for the others (2.6).
 */
export class ChatCompletionCall implements RelayCall {
  readonly surface = 'chat' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  readonly serverTools: OfferedTool[];
  private readonly pass: OpenAIPassThrough;
  private readonly translation: ChatTranslation;

  constructor(
    private readonly body: ChatCompletionBody,
    raw: Buffer,
    private readonly requestId: string,
  ) {
    this.pass = new OpenAIPassThrough(CHAT, body, raw, requestId, () => this.promptTokens());
    this.model = this.pass.model;
    this.stream = this.pass.stream;
    this.estimate = estimateChat(body);
    this.serverTools = chatServerTools(body);
    this.translation = new ChatTranslation(() => chatRequestFromOpenAI(body), () => this.promptTokens());
  }

  promptTokens(): number {
    return countChatPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('chat', channel, upstreamModel);
    return native ? native(this.pass.body) : this.translation.upstreamRequest(channel, upstreamModel, provider);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    if (servedNatively('chat', context)) return this.deliverPassed(upstream, context);
    if (!this.stream) return this.translation.deliverWhole(upstream, context, (response, usage) => chatResponseToOpenAI(response, this.model, usage));
    const encoder = new OpenAIChatChunkEncoder({ model: this.model, requestId: this.requestId, includeUsage: this.pass.clientWantsUsage });
    return this.translation.deliverStream(upstream, context, encoder);
  }

  /**
   * An OpenAI answer; a search model's answer to a request with `web_search_options` searched once
   * (docs/api.md 2.14), before its first token: charged even when the client left before any text.
   */
  private async deliverPassed(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const delivery = await this.pass.deliver(upstream, context);
    if (this.serverTools.length > 0) {
      delivery.usage.serverToolCalls = { [CHAT_WEB_SEARCH_TOOL]: 1 };
      delivery.billable = true;
    }
    return delivery;
  }
}
