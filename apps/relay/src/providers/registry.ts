import { CHANNEL_TYPE, type ChannelType } from '@modelgate/schemas';
import { anthropicProvider } from './anthropic';
import { geminiProvider } from './gemini';
import { openaiProvider } from './openai';
import type { Provider } from './provider';

/**
 * Channel type -> its provider. Adding a provider is its facts in @modelgate/schemas
 * (channel-types.ts), one folder under src/providers and one line here.
 */
const PROVIDERS: Readonly<Record<ChannelType, Provider>> = {
  [CHANNEL_TYPE.openai]: openaiProvider,
  [CHANNEL_TYPE.anthropic]: anthropicProvider,
  [CHANNEL_TYPE.gemini]: geminiProvider,
};

export function providerFor(channel: { type: ChannelType }): Provider {
  return PROVIDERS[channel.type];
}
