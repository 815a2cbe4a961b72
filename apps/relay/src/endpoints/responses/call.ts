import type { OfferedTool } from '../../features/billing/pricing';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import type { UpstreamResponse } from '../../features/upstream/client';
import type { Provider, UpstreamCall } from '../../core/provider';
import { servedNatively } from '../../dialects/native';
import { chatRequestFromResponses, inResponsesTerms } from '../../dialects/responses/to-internal';
import { chatResponseToResponses } from '../../dialects/responses/from-internal';
import { ResponsesEventEncoder } from '../../dialects/responses/event-encoder';
import { responsesServerTools } from '../../dialects/openai/server-tools';
import { ChatTranslation } from '../../dialects/translation';
import { ResponsesPassThrough } from '../../dialects/responses/pass-through';
import { countResponsesPromptTokens, estimateResponses, type ResponsesBody } from '../../dialects/responses/request';

/**
 * `POST /v1/responses` (docs/api.md 2.10) on any channel: passed through to channels that speak
 * it (a type-1 channel unless its `settings.responses` is `chat`), translated statelessly through the internal chat form for the others
 * (their chat dialect: Anthropic messages, Gemini contents, OpenAI chat completions).
 */
export class ResponsesCall implements RelayCall {
  readonly surface = 'responses' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  readonly serverTools: OfferedTool[];
  private readonly pass: ResponsesPassThrough;
  private readonly translation: ChatTranslation;

  constructor(
    private readonly body: ResponsesBody,
    raw: Buffer,
    private readonly requestId: string,
  ) {
    this.model = body.model;
    this.stream = body.stream === true;
    this.estimate = estimateResponses(body);
    this.serverTools = responsesServerTools(body.tools);
    this.pass = new ResponsesPassThrough(body, raw, this.stream, requestId, () => this.promptTokens(), this.serverTools);
    this.translation = new ChatTranslation(() => chatRequestFromResponses(body), () => this.promptTokens());
  }

  promptTokens(): number {
    return countResponsesPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('responses', channel, upstreamModel);
    if (native) return native(this.pass.body);
    try {
      return this.translation.upstreamRequest(channel, upstreamModel, provider);
    } catch (err) {
      throw inResponsesTerms(err);
    }
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    if (servedNatively('responses', context)) return this.pass.deliver(upstream, context);
    if (!this.stream) return this.translation.deliverWhole(upstream, context, (response, usage) => chatResponseToResponses(response, this.body, usage));
    return this.translation.deliverStream(upstream, context, new ResponsesEventEncoder({ body: this.body, requestId: this.requestId }));
  }
}
