import { AppError } from '@modelgate/errors';
import type { Provider, UpstreamCall } from '../../core/provider';
import { ClientBody } from '../../dialects/client-body';
import { GeminiPassThrough } from '../../dialects/gemini/pass-through';
import { countPromptTokens, estimateGenerateContent, type GenerateContentRequest } from '../../dialects/gemini/request';
import { geminiServerTools } from '../../dialects/gemini/server-tools';
import type { OfferedTool } from '../../features/billing/pricing';
import type { ChannelRecord } from '../../features/channels/channel-cache';
import type { Delivery, DeliveryContext, RelayCall } from '../../features/relay/relay-call';
import type { UpstreamResponse } from '../../features/upstream/client';

/** Gemini `generateContent` / `streamGenerateContent` (docs/api.md 2.3) through a channel that speaks it. */
export class GeminiCall implements RelayCall {
  readonly surface = 'gemini' as const;

  readonly estimate: RelayCall['estimate'];
  readonly serverTools: OfferedTool[];
  private readonly clientBody: ClientBody;
  private readonly pass: GeminiPassThrough;

  constructor(
    raw: Buffer,
    private readonly body: GenerateContentRequest,
    readonly model: string,
    readonly stream: boolean,
  ) {
    this.clientBody = new ClientBody(raw, body as Record<string, unknown>, stream, { modelInPath: true });
    this.estimate = estimateGenerateContent(body);
    this.serverTools = geminiServerTools((body as { tools?: unknown }).tools);
    this.pass = new GeminiPassThrough(this.serverTools, () => this.promptTokens());
  }

  promptTokens(): number {
    return countPromptTokens(this.body);
  }

  /** The client's body byte-for-byte (TTS `speechConfig` included); routing sends it only to channels that speak it. */
  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall {
    const native = provider.native('gemini', channel, upstreamModel);
    if (!native) throw new AppError('internal_error', `channel ${channel.id} does not serve generateContent for ${upstreamModel}`);
    return native(this.clientBody);
  }

  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery> {
    return this.pass.deliver(upstream, context, this.stream);
  }
}
