/**
 * Channel types (docs/api.md 2.6, new-api's numbers) and what each one is: the one place account
 * and relay read them from. The relay's provider folders build on these facts; the account service
 * validates channels and sends its channel test with them.
 */

export const CHANNEL_TYPE = { openai: 1, anthropic: 14, gemini: 24 } as const;
export type ChannelType = (typeof CHANNEL_TYPE)[keyof typeof CHANNEL_TYPE];

/** The wire dialect a channel's upstream speaks. */
export type ProviderDialect = 'openai' | 'anthropic' | 'gemini';

/**
 * The client-facing operations of the relay (docs/api.md 2.1-2.10). A channel serves a surface
 * natively (same dialect: passed through) or through the internal chat form (translated).
 */
export type RelaySurface = 'completions' | 'chat' | 'embeddings' | 'gemini' | 'messages' | 'responses';

/** A channel's optional `settings` object (docs/api.md 3.3). */
export interface ChannelSettings {
  /** Type 1 only: how `/v1/responses` reaches the upstream (docs/api.md 2.10). */
  responses?: 'native' | 'chat';
}

export interface ChannelTypeFacts {
  type: ChannelType;
  /** Shown in the console and logs. */
  label: string;
  dialect: ProviderDialect;
  /** Where a channel sends requests when its `base_url` is ''. */
  defaultBaseUrl: string;
  /** The surfaces a channel of this type can answer. */
  surfaces: readonly RelaySurface[];
  /** The settings keys this type accepts. */
  settings: readonly (keyof ChannelSettings)[];
  /** Upstream authentication (and protocol version) headers for a channel key. */
  authHeaders(key: string): Record<string, string>;
  /** The channel test (docs/api.md 3.3): one small chat request in the type's own dialect. */
  testRequest(model: string): { path: string; body: Record<string, unknown> };
}

/** The Messages API version the relay speaks to Anthropic when the client names none. */
export const ANTHROPIC_VERSION = '2023-06-01';

export const CHANNEL_TYPES: Readonly<Record<ChannelType, ChannelTypeFacts>> = {
  [CHANNEL_TYPE.openai]: {
    type: CHANNEL_TYPE.openai,
    label: 'OpenAI-compatible',
    dialect: 'openai',
    defaultBaseUrl: 'https://api.openai.com',
    surfaces: ['completions', 'chat', 'embeddings', 'messages', 'responses'],
    settings: ['responses'],
    authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
    testRequest: (model) => ({
      path: '/v1/chat/completions',
      body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 },
    }),
  },
  [CHANNEL_TYPE.anthropic]: {
    type: CHANNEL_TYPE.anthropic,
    label: 'Anthropic',
    dialect: 'anthropic',
    defaultBaseUrl: 'https://api.anthropic.com',
    surfaces: ['chat', 'messages', 'responses'],
    settings: [],
    authHeaders: (key) => ({ 'x-api-key': key, 'anthropic-version': ANTHROPIC_VERSION }),
    testRequest: (model) => ({
      path: '/v1/messages',
      body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 },
    }),
  },
  [CHANNEL_TYPE.gemini]: {
    type: CHANNEL_TYPE.gemini,
    label: 'Gemini',
    dialect: 'gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    surfaces: ['gemini', 'chat', 'embeddings', 'messages', 'responses'],
    settings: [],
    authHeaders: (key) => ({ 'x-goog-api-key': key }),
    testRequest: (model) => ({
      path: `/v1beta/models/${encodeURIComponent(model)}:generateContent`,
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 1 } },
    }),
  },
};

export const CHANNEL_TYPE_NUMBERS = Object.values(CHANNEL_TYPE);

export function isChannelType(type: number): type is ChannelType {
  return Object.hasOwn(CHANNEL_TYPES, type);
}

/** The base URL a channel actually uses: its own, or its type's default. */
export function channelBaseUrl(channel: { type: ChannelType; baseUrl: string }): string {
  return channel.baseUrl.trim() || CHANNEL_TYPES[channel.type].defaultBaseUrl;
}

/**
 * Whether an edit would send the channel's stored key somewhere else: another type (another
 * provider, another auth header) or another base URL in effect. Such an edit must bring a new key.
 */
export function channelAddressChanges(stored: { type: number; baseUrl: string }, edit: { type?: number; baseUrl?: string }): boolean {
  const type = edit.type ?? stored.type;
  if (type !== stored.type) return true;
  if (edit.baseUrl === undefined) return false;
  if (!isChannelType(type)) return edit.baseUrl.trim() !== stored.baseUrl.trim();
  return channelBaseUrl({ type, baseUrl: edit.baseUrl }) !== channelBaseUrl({ type, baseUrl: stored.baseUrl });
}
