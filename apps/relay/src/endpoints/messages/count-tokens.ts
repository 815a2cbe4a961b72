import { sendJson } from '@modelgate/http';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { ChannelCall, Delivery, DeliveryContext } from '../../features/relay/relay-call';
import { countPromptTokens } from '../../features/relay/tokens';
import { answerObjectOf, readBody, type UpstreamResponse } from '../../features/upstream/client';
import type { Provider, UpstreamCall } from '../../core/provider';
import { ClientBody } from '../../dialects/client-body';
import { servedNatively } from '../../dialects/native';
import type { AnthropicClientHeaders } from '../../dialects/anthropic/pass-through';
import { type CountTokensBody, messagesPromptPieces } from '../../dialects/anthropic/request';

/** Nothing is charged for a count (docs/api.md 2.9). */
const NOT_CHARGED: Pick<Delivery, 'usage' | 'billable'> = {
  usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  billable: false,
};

/**
 * `POST /v1/messages/count_tokens` (docs/api.md 2.9), routed like `/v1/messages` and never
 * charged (RelayService.relayUncharged). A channel that has the operation counts natively, with the
 * client's bytes and protocol headers; for the others, and the relay answers
 * with its own count of the prompt, the one it charges when an upstream reports no usage.
 */
export class CountTokensCall implements ChannelCall {
  readonly surface = 'messages' as const;
  readonly stream = false;
  readonly model: string;
  private readonly passed: ClientBody;

  constructor(
    private readonly body: CountTokensBody,
    raw: Buffer,
    clientHeaders: AnthropicClientHeaders,
  ) {
    this.model = body.model;
    this.passed = new ClientBody(raw, body, false, { anthropicVersion: clientHeaders.version, anthropicBeta: clientHeaders.beta });
  }

  answerLocally(context: DeliveryContext): Delivery | undefined {
    if (servedNatively('count_tokens', context)) return undefined;
    const { res } = context;
    sendJson(res, 200, { input_tokens: countPromptTokens(messagesPromptPieces(this.body)) });
    return { ...NOT_CHARGED, firstByteMs: null };
  }

  /** Only channels that count natively are asked (see answerLocally). */
  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('count_tokens', channel, upstreamModel);
    if (!native) throw new Error(`channel ${channel.id} cannot count tokens`);
    return native(this.passed);
  }

  /** The channel's `{input_tokens}` as it is (checked to be a JSON object). */
  async deliver(upstream: UpstreamResponse, { res, signal, startedAt }: DeliveryContext): Promise<Delivery> {
    const raw = await readBody(upstream, signal);
    answerObjectOf(raw);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': raw.length });
    res.end(raw);
    return { ...NOT_CHARGED, firstByteMs: Date.now() - startedAt };
  }
}
