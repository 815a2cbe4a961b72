import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import type { UpstreamResponse } from '../../features/upstream/client';
import { AppError } from '@modelgate/errors';
import type { Provider, UpstreamCall } from '../../core/provider';
import { choiceTexts } from '../../providers/openai/usage';
import { OpenAIPassThrough, type OpenAISurface } from '../../dialects/openai/pass-through';
import { type CompletionRequest, countPromptTokens, estimateCompletion } from '../../dialects/openai/completion-request';

const COMPLETIONS: OpenAISurface = { chunkObject: 'text_completion', idPrefix: 'cmpl', textsOf: choiceTexts };

/** `POST /v1/completions` (docs/api.md 2.1), passed through to a channel that speaks it. */
export class CompletionCall implements RelayCall {
  readonly surface = 'completions' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  private readonly pass: OpenAIPassThrough;

  constructor(
    private readonly body: CompletionRequest,
    raw: Buffer,
    requestId: string,
  ) {
    this.pass = new OpenAIPassThrough(COMPLETIONS, body, raw, requestId, () => this.promptTokens());
    this.model = this.pass.model;
    this.stream = this.pass.stream;
    this.estimate = estimateCompletion(body);
  }

  promptTokens(): number {
    return countPromptTokens(this.body);
  }

  /** Routing sends completions only to channels that serve them natively (their type's surfaces). */
  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('completions', channel, upstreamModel);
    if (!native) throw new AppError('internal_error', `channel type ${provider.facts.type} has no completions`);
    return native(this.pass.body);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.pass.deliver(upstream, context);
  }
}
