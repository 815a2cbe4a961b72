import { CHANNEL_TYPES } from '@modelgate/schemas';
import { deliverWholeOpenAI, type OpenAIPassThrough, OpenAIPassThroughStream, PassThroughBody } from '../openai-pass-through';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import { deliverEventStream } from '../../features/relay/event-stream';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import type { UpstreamResponse } from '../../features/upstream/client';
import { choiceTexts } from '../../providers/openai/usage';
import { type CompletionRequest, countPromptTokens, estimateCompletion } from './request';

/** `POST /v1/completions` through an OpenAI-compatible channel (docs/api.md 2.1), passed through. */
export class CompletionCall implements RelayCall {
  readonly surface = 'completions' as const;
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  private readonly pass: OpenAIPassThrough;
  private readonly passThroughBody: PassThroughBody;

  constructor(
    private readonly body: CompletionRequest,
    raw: Buffer,
    requestId: string,
  ) {
    this.model = body.model;
    this.stream = body.stream === true;
    const clientWantsUsage = body.stream_options?.include_usage === true;
    this.estimate = estimateCompletion(body);
    this.pass = {
      model: this.model,
      chunkObject: 'text_completion',
      idPrefix: 'cmpl',
      requestId,
      clientWantsUsage,
      textsOf: choiceTexts,
      promptTokens: () => this.promptTokens(),
    };
    this.passThroughBody = new PassThroughBody(raw, body, this.stream, clientWantsUsage);
  }

  promptTokens(): number {
    return countPromptTokens(this.body);
  }

  upstreamRequest(channel: ChannelRecord, upstreamModel: string) {
    return {
      path: `${channel.pathPrefix}/v1/completions`,
      headers: { 'content-type': 'application/json', ...CHANNEL_TYPES[channel.type].authHeaders(channel.key) },
      body: this.passThroughBody.for(upstreamModel),
    };
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.stream
      ? deliverEventStream(upstream, context, new OpenAIPassThroughStream(this.pass))
      : deliverWholeOpenAI(upstream, context, this.pass);
  }
}
