import type { ChannelType } from '@modelgate/schemas';
import { CHANNEL_TYPE } from '@modelgate/schemas';
import type { Provider } from '../core/provider';
import { anthropicProvider } from './anthropic';
import { azureProvider } from './azure';
import { bedrockProvider } from './bedrock';
import { geminiProvider } from './gemini';
import { openaiProvider } from './openai';
import { vertexProvider } from './vertex';

/**
 * Channel type -> its provider. Adding a provider is its facts in @modelgate/schemas
 * (channel-types.ts), one folder under src/providers and one line here. A type this relay has no
 * provider for (an account service newer than the relay, mid-upgrade) is not routed to.
 */
const PROVIDERS: Readonly<Partial<Record<ChannelType, Provider>>> = {
  [CHANNEL_TYPE.openai]: openaiProvider,
  [CHANNEL_TYPE.azure]: azureProvider,
  [CHANNEL_TYPE.anthropic]: anthropicProvider,
  [CHANNEL_TYPE.gemini]: geminiProvider,
  [CHANNEL_TYPE.bedrock]: bedrockProvider,
  [CHANNEL_TYPE.vertex]: vertexProvider,
};

export function providerFor(type: ChannelType): Provider | undefined {
  return PROVIDERS[type];
}

/** Tells every provider which channels are loaded, so it forgets what it kept for the others. */
export function forgetUnloadedChannels(loaded: ReadonlySet<number>): void {
  for (const provider of Object.values(PROVIDERS)) provider.forgetChannels?.(loaded);
}
