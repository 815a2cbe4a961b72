/**
 * Channel types (docs/api.md 2.6, new-api's numbers) and what each one is: the one place account
 * and relay read them from. The relay's provider folders build on these facts; the account service
 * validates channels and sends its channel test with them.
 */

export const CHANNEL_TYPE = { openai: 1, azure: 3, anthropic: 14, gemini: 24, bedrock: 33, vertex: 41 } as const;
export type ChannelType = (typeof CHANNEL_TYPE)[keyof typeof CHANNEL_TYPE];

/**
 * The relay's wire dialects: what a client speaks (its key header, its error shape, its request and
 * answer formats) and what a channel's upstream speaks. One vocabulary for keys, errors, routing
 * and providers.
 */
export type Dialect = 'openai' | 'anthropic' | 'gemini';

/**
 * The client-facing operations of the relay (docs/api.md 2.1-2.13). A channel serves a surface
 * natively (same dialect: passed through) or through the internal form (translated).
 */
export type RelaySurface =
  | 'completions'
  | 'chat'
  | 'embeddings'
  | 'gemini'
  | 'messages'
  | 'responses'
  | MediaSurface;

/** The media and other non-chat surfaces (docs/api.md 2.13), billed per unit where no tokens are reported (2.14). */
export type MediaSurface = 'images' | 'image_edits' | 'speech' | 'transcriptions' | 'translations' | 'moderations' | 'rerank';

/** OpenAI's image and audio surfaces, which types 1 and 3 pass through (docs/api.md 2.13). */
const OPENAI_MEDIA_SURFACES = ['images', 'image_edits', 'speech', 'transcriptions', 'translations'] as const;

/** A channel's optional `settings` object (docs/api.md 3.3, 2.12). */
export interface ChannelSettings {
  /** Type 1 only: how `/v1/responses` reaches the upstream (docs/api.md 2.10). */
  responses?: 'native' | 'chat';
  /** Azure OpenAI's `api-version` (default AZURE_API_VERSION). */
  api_version?: string;
  /** The cloud region: required for Bedrock, `global` by default for Vertex AI. */
  region?: string;
  /** Vertex AI: the Google Cloud project (default: the key file's `project_id`). */
  project_id?: string;
}

export interface ChannelTypeFacts {
  type: ChannelType;
  /** Shown in the console and logs. */
  label: string;
  dialect: Dialect;
  /**
   * Where a channel sends requests when its `base_url` is '', as shown to admins ('' when the type
   * has no default and `base_url` is required); `{region}` stands for `settings.region`.
   */
  defaultBaseUrl: string;
  /** The default base URL for a channel's settings, when it depends on them (the region). */
  defaultBaseUrlFor?(settings: ChannelSettings): string;
  /** What an admin pastes as the key, shown in the console. */
  keyHint: string;
  /** Why a key cannot be this type's credential, or undefined when it has the right form. */
  checkKey?(key: string): string | undefined;
  /** Why the settings are incomplete for this type (a required one missing), or undefined. */
  checkSettings?(settings: ChannelSettings): { field: string; message: string } | undefined;
  /** The surfaces a channel of this type can answer. */
  surfaces: readonly RelaySurface[];
  /** The settings keys this type accepts. */
  settings: readonly (keyof ChannelSettings)[];
}

/** The Messages API version the relay speaks to Anthropic when the client names none. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Azure OpenAI's data-plane API version when a channel names none (docs/api.md 2.12). */
export const AZURE_API_VERSION = '2024-10-21';

/** The fields a Google service-account key file must have to sign in (docs/api.md 2.12). */
const SERVICE_ACCOUNT_FIELDS = ['client_email', 'private_key', 'token_uri'] as const;

function checkServiceAccountKey(key: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(key);
  } catch {
    return 'must be the service account key file (JSON)';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'must be the service account key file (a JSON object)';
  const file = parsed as Record<string, unknown>;
  const missing = SERVICE_ACCOUNT_FIELDS.filter((field) => typeof file[field] !== 'string' || file[field] === '');
  if (missing.length > 0) return `the key file lacks ${missing.join(', ')}`;
  return tokenUriProblem(file.token_uri as string);
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Why a service account's `token_uri` cannot be used, or undefined: https, or plain http only on
 * this machine's loopback (a local token server), since the signed assertion it receives is a
 * credential for as long as it is valid.
 */
export function tokenUriProblem(tokenUri: string): string | undefined {
  if (!URL.canParse(tokenUri)) return 'token_uri must be an https URL';
  const url = new URL(tokenUri);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname))) return undefined;
  return 'token_uri must be an https URL (http only on a loopback address)';
}

/** `ACCESS_KEY_ID|SECRET_ACCESS_KEY[|SESSION_TOKEN]`, or a Bedrock API key (no `|`). */
function checkBedrockKey(key: string): string | undefined {
  if (!key.includes('|')) return key.trim() === key && key.length > 0 ? undefined : 'must be a Bedrock API key or ACCESS_KEY_ID|SECRET_ACCESS_KEY[|SESSION_TOKEN]';
  const parts = key.split('|');
  if (parts.length > 3 || parts.some((part) => part.trim() === '' || part.trim() !== part)) {
    return 'must be ACCESS_KEY_ID|SECRET_ACCESS_KEY or ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN';
  }
  return undefined;
}

/** Vertex AI's endpoint for a region: `global` has no regional prefix. */
function vertexBaseUrl(region: string): string {
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
}

/** Vertex AI's region when a channel names none. */
export const VERTEX_DEFAULT_REGION = 'global';

export const CHANNEL_TYPES: Readonly<Record<ChannelType, ChannelTypeFacts>> = {
  [CHANNEL_TYPE.openai]: {
    type: CHANNEL_TYPE.openai,
    label: 'OpenAI-compatible',
    dialect: 'openai',
    defaultBaseUrl: 'https://api.openai.com',
    surfaces: ['completions', 'chat', 'embeddings', 'messages', 'responses', ...OPENAI_MEDIA_SURFACES, 'moderations', 'rerank'],
    settings: ['responses'],
    keyHint: 'API key (sent as Authorization: Bearer)',
  },
  [CHANNEL_TYPE.azure]: {
    type: CHANNEL_TYPE.azure,
    label: 'Azure OpenAI',
    dialect: 'openai',
    defaultBaseUrl: '',
    surfaces: ['completions', 'chat', 'embeddings', 'messages', 'responses', ...OPENAI_MEDIA_SURFACES],
    settings: ['api_version'],
    keyHint: 'The resource key (sent as api-key); base URL https://<resource>.openai.azure.com; models are deployment names',
  },
  [CHANNEL_TYPE.anthropic]: {
    type: CHANNEL_TYPE.anthropic,
    label: 'Anthropic',
    dialect: 'anthropic',
    defaultBaseUrl: 'https://api.anthropic.com',
    surfaces: ['chat', 'messages', 'responses'],
    settings: [],
    keyHint: 'API key (sent as x-api-key)',
  },
  [CHANNEL_TYPE.gemini]: {
    type: CHANNEL_TYPE.gemini,
    label: 'Gemini',
    dialect: 'gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    surfaces: ['gemini', 'chat', 'embeddings', 'messages', 'responses', 'images'],
    settings: [],
    keyHint: 'API key (sent as x-goog-api-key)',
  },
  [CHANNEL_TYPE.bedrock]: {
    type: CHANNEL_TYPE.bedrock,
    label: 'AWS Bedrock',
    dialect: 'anthropic',
    defaultBaseUrl: 'https://bedrock-runtime.{region}.amazonaws.com',
    defaultBaseUrlFor: (settings) => `https://bedrock-runtime.${settings.region ?? ''}.amazonaws.com`,
    surfaces: ['chat', 'messages', 'responses'],
    settings: ['region'],
    keyHint: 'ACCESS_KEY_ID|SECRET_ACCESS_KEY (|SESSION_TOKEN), or a Bedrock API key',
    checkKey: checkBedrockKey,
    checkSettings: (settings) => (settings.region ? undefined : { field: 'settings.region', message: 'AWS Bedrock channels need a region' }),
  },
  [CHANNEL_TYPE.vertex]: {
    type: CHANNEL_TYPE.vertex,
    label: 'Google Vertex AI',
    dialect: 'gemini',
    defaultBaseUrl: 'https://{region}-aiplatform.googleapis.com (global: https://aiplatform.googleapis.com)',
    defaultBaseUrlFor: (settings) => vertexBaseUrl(settings.region ?? VERTEX_DEFAULT_REGION),
    surfaces: ['gemini', 'chat', 'messages', 'responses', 'images'],
    settings: ['region', 'project_id'],
    keyHint: 'The service account key file (JSON)',
    checkKey: checkServiceAccountKey,
  },
};

export const CHANNEL_TYPE_NUMBERS = Object.values(CHANNEL_TYPE);

export function isChannelType(type: number): type is ChannelType {
  return Object.hasOwn(CHANNEL_TYPES, type);
}

/** Whether the type has no default address, so a channel of it needs its own base URL (Azure's endpoint). */
export function needsBaseUrl(type: ChannelType): boolean {
  return CHANNEL_TYPES[type].defaultBaseUrl === '';
}

/** The base URL a channel actually uses: its own, or its type's default for its settings. */
export function channelBaseUrl(channel: { type: ChannelType; baseUrl: string; settings?: ChannelSettings }): string {
  const own = channel.baseUrl.trim();
  if (own) return own;
  const facts = CHANNEL_TYPES[channel.type];
  return facts.defaultBaseUrlFor ? facts.defaultBaseUrlFor(channel.settings ?? {}) : facts.defaultBaseUrl;
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
