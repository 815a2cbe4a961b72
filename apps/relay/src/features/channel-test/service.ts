import { AppError } from '@modelgate/errors';
import type { ChannelTestResult, ChannelType } from '@modelgate/schemas';
import type { ChatRequest } from '../../core/chat';
import { CredentialRefused, type Provider } from '../../core/provider';
import { channelRecordOf, type ChannelRecord } from '../channels/channel-cache';
import type { ChannelRepository } from '../channels/repository';
import { maskUpstreamText } from '../relay/upstream-errors';
import { CallerSignal } from '../upstream/caller-signal';
import { type UpstreamClient, UpstreamFailure } from '../upstream/client';

const MAX_MESSAGE_LENGTH = 300;

/** One word and one output token: the cheapest answer every model gives. */
function testRequest(model: string): ChatRequest {
  return { model, system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], maxTokens: 1, stream: false };
}

export interface ChannelTesterDeps {
  repository: ChannelRepository;
  cryptoSecret: string;
  providerOf: (type: ChannelType) => Provider | undefined;
  upstream: UpstreamClient;
}

/**
 * The channel test (docs/api.md 3.3): one small chat request through the channel's own provider
 * (its paths, signing and token exchange), timed. The account service records the outcome.
 */
export class ChannelTester {
  constructor(private readonly deps: ChannelTesterDeps) {}

  async test(channelId: number, model: string): Promise<ChannelTestResult> {
    const row = await this.deps.repository.findById(channelId);
    if (!row) throw new AppError('not_found', 'channel not found');
    const channel = channelRecordOf(row, this.deps.cryptoSecret, this.deps.providerOf);
    if (typeof channel === 'string') return { success: false, message: `the relay cannot use this channel: ${channel}`, time_ms: 0 };
    const started = performance.now();
    const message = await this.send(channel, channel.modelMapping.get(model) ?? model);
    const timeMs = Math.round(performance.now() - started);
    return { success: message === '', message: message.slice(0, MAX_MESSAGE_LENGTH), time_ms: timeMs };
  }

  /** '' when the upstream answered 2xx; else what went wrong, in words that hold no secret. */
  private async send(channel: ChannelRecord, upstreamModel: string): Promise<string> {
    const { provider } = channel;
    try {
      const call = provider.chat(channel, upstreamModel).request(testRequest(upstreamModel));
      if (provider.authorize) await provider.authorize(channel, call);
      const answer = await this.deps.upstream.postWhole({
        origin: channel.origin,
        path: call.path,
        headers: call.headers,
        body: call.body,
        signal: new CallerSignal(),
      });
      if (answer.statusCode >= 200 && answer.statusCode < 300) return '';
      const error = provider.errorOf(answer.body, answer.headers);
      const detail = error?.message ? `: ${maskUpstreamText(error.message, channel)}` : '';
      return `upstream answered ${answer.statusCode}${detail}`;
    } catch (err) {
      if (err instanceof CredentialRefused) return `the credential was refused: ${maskUpstreamText(err.message, channel)}`;
      if (err instanceof UpstreamFailure) return err.kind === 'timeout' ? 'upstream timed out' : `upstream unreachable (${err.kind})`;
      if (err instanceof AppError) return err.message;
      throw err;
    }
  }
}
