import type { OfferedTool } from '../../features/billing/pricing';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import { deliverEventStream } from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import { countPromptTokens, estimatePromptTokens, type PromptPieces } from '../../features/relay/tokens';
import type { UpstreamResponse } from '../../features/upstream/client';
import { chatRequestFromAnthropic } from '../../dialects/anthropic/to-internal';
import { chatResponseToAnthropic } from '../../dialects/anthropic/from-internal';
import { AnthropicEventEncoder } from '../../dialects/anthropic/event-encoder';
import { anthropicServerTools } from '../../providers/anthropic/server-tools';
import type { Provider, UpstreamCall } from '../../core/provider';
import { ClientBody } from '../../dialects/client-body';
import { servedNatively } from '../../dialects/native';
import { ChatTranslation } from '../../dialects/translation';
import { type AnthropicClientHeaders, deliverWholeMessage, MessagesPassThroughStream, renamedModel } from '../../dialects/anthropic/pass-through';
import { type MessagesBody, messagesPromptPieces } from '../../dialects/anthropic/request';

/**
 * `POST /v1/messages` (docs/api.md 2.9) on any channel that can answer it: passed through to
 * channels that speak Messages (the client's bytes, `anthropic-version` and `anthropic-beta`), translated
 * through the internal form for the others (2.6).
 */
export class MessagesCall implements RelayCall {
  readonly surface = 'messages' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  readonly serverTools: OfferedTool[];
  private readonly prompt: PromptPieces;
  /** The client's bytes, re-serialised only for a channel that renames the model. */
  private readonly passed: ClientBody;
  private readonly translation: ChatTranslation;

  constructor(
    private readonly body: MessagesBody,
    raw: Buffer,
    private readonly requestId: string,
    clientHeaders: AnthropicClientHeaders,
  ) {
    this.model = body.model;
    this.stream = body.stream === true;
    // Anthropic streams report usage unasked: only the model may change.
    this.passed = new ClientBody(raw, body, this.stream, { anthropicVersion: clientHeaders.version, anthropicBeta: clientHeaders.beta });
    this.prompt = messagesPromptPieces(body);
    // `max_tokens` is required, and a thinking budget is part of it.
    this.estimate = { promptTokens: estimatePromptTokens(this.prompt), completionTokens: body.max_tokens };
    this.serverTools = anthropicServerTools(body.tools);
    this.translation = new ChatTranslation(() => chatRequestFromAnthropic(body), () => this.promptTokens());
  }

  promptTokens(): number {
    return countPromptTokens(this.prompt);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('messages', channel, upstreamModel);
    return native ? native(this.passed) : this.translation.upstreamRequest(channel, upstreamModel, provider);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    const { channel } = context;
    if (servedNatively('messages', context)) {
      const clientModel = renamedModel(channel, this.model);
      const promptTokens = () => this.promptTokens();
      return this.stream
        ? deliverEventStream(upstream, context, new MessagesPassThroughStream(clientModel, promptTokens))
        : deliverWholeMessage(upstream, context, clientModel, promptTokens);
    }
    if (!this.stream) return this.translation.deliverWhole(upstream, context, (response, usage) => chatResponseToAnthropic(response, this.model, usage));
    const encoder = new AnthropicEventEncoder({ model: this.model, requestId: this.requestId, promptTokens: this.estimate.promptTokens });
    return this.translation.deliverStream(upstream, context, encoder);
  }
}
