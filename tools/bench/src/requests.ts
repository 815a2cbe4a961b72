import type { RequestSpec } from './load';

/** The channels the seeded stack has on the fake upstream. */
export const CHANNELS = ['openai', 'anthropic', 'gemini', 'bedrock', 'vertex'] as const;
export type Channel = (typeof CHANNELS)[number];

/** The channels chat, messages and responses go through: each surface native on one, translated on the other. */
export const CHAT_CHANNELS = ['openai', 'anthropic'] as const satisfies readonly Channel[];
export type ChatChannel = (typeof CHAT_CHANNELS)[number];

/**
 * What the bench sends: a completion, a chat completion, an Anthropic message or an OpenAI response
 * through one of the chat channels (each passes through the channel that speaks it and is translated
 * on the other), a Gemini generateContent through the Gemini channel, a cloud channel's call: a
 * chat completion through Bedrock's Converse API, a generateContent through Vertex AI, an image
 * generation through the OpenAI channel, or a chat completion through the OpenAI channel with the
 * key that has limits and a budget.
 */
export type CallKind =
  | 'completions'
  | `chat-${ChatChannel}`
  | `messages-${ChatChannel}`
  | `responses-${ChatChannel}`
  | 'gemini'
  | 'chat-bedrock'
  | 'gemini-vertex'
  | 'images'
  | 'chat-limited';
export const CHAT_KINDS = ['chat-openai', 'chat-anthropic'] as const satisfies readonly CallKind[];
export const MESSAGES_KINDS = ['messages-anthropic', 'messages-openai'] as const satisfies readonly CallKind[];
export const RESPONSES_KINDS = ['responses-openai', 'responses-anthropic'] as const satisfies readonly CallKind[];
export const GEMINI_KINDS = ['gemini'] as const satisfies readonly CallKind[];
/** The cloud channels' kinds: SigV4 on every Bedrock call, a cached access token on every Vertex one. */
export const CLOUD_KINDS = ['chat-bedrock', 'gemini-vertex'] as const satisfies readonly CallKind[];
export const IMAGES_KINDS = ['images'] as const satisfies readonly CallKind[];
/** OpenAI pass-through chat with the key that has limits and a budget (never reached), against the same chat without them. */
export const LIMITED_KINDS = ['chat-openai', 'chat-limited'] as const satisfies readonly CallKind[];
export const CALL_KINDS: readonly CallKind[] = [
  'completions',
  ...CHAT_KINDS,
  'chat-limited',
  ...MESSAGES_KINDS,
  ...RESPONSES_KINDS,
  ...GEMINI_KINDS,
  ...CLOUD_KINDS,
  ...IMAGES_KINDS,
];
/**
 * The kinds the fake upstream is asked directly, as the baseline of the gateway's: not the cloud
 * ones, whose calls the fake takes only signed (SigV4) or with an access token from its token route.
 */
export const DIRECT_KINDS: readonly CallKind[] = CALL_KINDS.filter((kind) => !(CLOUD_KINDS as readonly CallKind[]).includes(kind));

/**
 * Each channel's type and the model the bench asks it for. The Bedrock channel maps its model to
 * `upstreamModel`, a model Bedrock serves through Converse; its name is one with a default price, as
 * every model the bench asks for (the bench stores no prices).
 */
export const CHANNEL_FACTS: Record<Channel, { type: 1 | 14 | 24 | 33 | 41; model: string; upstreamModel?: string; label: string }> = {
  openai: { type: 1, model: 'gpt-4o-mini', label: 'OpenAI channel, pass-through' },
  anthropic: { type: 14, model: 'claude-sonnet-4-5', label: 'Anthropic channel, translated' },
  gemini: { type: 24, model: 'gemini-2.5-flash', label: 'Gemini channel, pass-through' },
  bedrock: { type: 33, model: 'gpt-4.1-mini', upstreamModel: 'amazon.nova-pro-v1:0', label: 'Bedrock channel, Converse, SigV4' },
  vertex: { type: 41, model: 'gemini-2.5-flash-lite', label: 'Vertex AI channel, pass-through' },
};

/**
 * The media models the OpenAI channel also serves, priced per unit by the default ModelPrice (their
 * answers report no tokens): dall-e-3 per image, whisper-1 per minute of audio.
 */
export const MEDIA_MODELS = { images: 'dall-e-3', transcriptions: 'whisper-1' } as const;

export const CALL_LABELS: Record<CallKind, string> = {
  completions: 'completions',
  'chat-openai': `chat (${CHANNEL_FACTS.openai.label})`,
  'chat-anthropic': `chat (${CHANNEL_FACTS.anthropic.label})`,
  'messages-anthropic': 'messages (Anthropic channel, pass-through)',
  'messages-openai': 'messages (OpenAI channel, translated)',
  'responses-openai': 'responses (OpenAI channel, native)',
  'responses-anthropic': 'responses (Anthropic channel, translated)',
  gemini: `generateContent (${CHANNEL_FACTS.gemini.label})`,
  'chat-bedrock': `chat (${CHANNEL_FACTS.bedrock.label})`,
  'gemini-vertex': `generateContent (${CHANNEL_FACTS.vertex.label})`,
  images: `images, ${MEDIA_MODELS.images} (${CHANNEL_FACTS.openai.label})`,
  'chat-limited': `chat with a key's limits and budget (${CHANNEL_FACTS.openai.label})`,
};

/**
 * The wire dialect of an answer: OpenAI completions and chat, Anthropic messages, OpenAI responses
 * or Gemini generateContent (through the gateway, and the fake's own routes as the direct baseline).
 */
export type AnswerDialect = 'openai' | 'anthropic' | 'responses' | 'gemini';

/** One request kind as sent to one target: the request, and the dialect its answer comes in. */
export interface Call extends RequestSpec {
  dialect: AnswerDialect;
  /**
   * True when a whole (non-streamed) answer is what the call must produce, with usage (the images of
   * an image generation, which its model is priced by).
   */
  isAnswer(body: unknown): boolean;
}

export interface CallOptions {
  origin: string;
  /** The fake upstream itself, not the gateway. */
  direct: boolean;
  /** The gateway's API key (the fake accepts any). */
  key: string;
  /** The key with rpm, tpm and concurrency limits and a budget, none of them reached (the chat-limited kind). */
  limitedKey?: string;
  /** Model of the completions calls. */
  completionsModel: string;
  /** Tokens (one per upstream chunk) each answer has. */
  chunks: number;
  stream: boolean;
}

/** The same prompt in every kind, so the kinds differ only in their surface and channel. */
const PROMPT = 'Say hello to the benchmark';

type Answer = {
  object?: unknown;
  type?: unknown;
  usage?: { completion_tokens?: unknown; output_tokens?: unknown };
  usageMetadata?: { candidatesTokenCount?: unknown };
  data?: { b64_json?: unknown }[];
};

const hasTokens = (value: unknown): boolean => typeof value === 'number' && value > 0;

const bearer = (key: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });

/** The surfaces a chat-channel kind can be sent as, each with its path, headers, body and answer. */
type ChatSurface = 'chat' | 'messages' | 'responses';

function chatSurfaceCall(surface: ChatSurface, model: string, options: CallOptions): Call {
  const { origin, key, chunks, stream } = options;
  const messages = [{ role: 'user', content: PROMPT }];
  if (surface === 'messages') {
    return {
      origin,
      path: '/v1/messages',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, messages, max_tokens: chunks, temperature: 0.7, stream }),
      dialect: 'anthropic',
      isAnswer: (body) => (body as Answer).type === 'message' && hasTokens((body as Answer).usage?.output_tokens),
    };
  }
  if (surface === 'responses') {
    return {
      origin,
      path: '/v1/responses',
      headers: bearer(key),
      body: JSON.stringify({ model, input: PROMPT, max_output_tokens: chunks, temperature: 0.7, stream }),
      dialect: 'responses',
      isAnswer: (body) => (body as Answer).object === 'response' && hasTokens((body as Answer).usage?.output_tokens),
    };
  }
  return {
    origin,
    path: '/v1/chat/completions',
    headers: bearer(key),
    body: JSON.stringify({ model, messages, max_tokens: chunks, temperature: 0.7, stream }),
    dialect: 'openai',
    isAnswer: (body) => (body as Answer).object === 'chat.completion' && hasTokens((body as Answer).usage?.completion_tokens),
  };
}

/** The request of `kind` for one target: the fake upstream direct is called in the channel's own dialect. */
export function callOf(kind: CallKind, options: CallOptions): Call {
  const { origin, key, chunks, stream } = options;
  if (options.direct && !DIRECT_KINDS.includes(kind)) throw new Error(`the fake upstream is not asked ${CALL_LABELS[kind]} directly`);
  if (kind === 'completions') {
    return {
      origin,
      path: '/v1/completions',
      headers: bearer(key),
      body: JSON.stringify({ model: options.completionsModel, prompt: PROMPT, max_tokens: chunks, temperature: 0.7, stream }),
      dialect: 'openai',
      isAnswer: (body) => (body as Answer).object === 'text_completion' && hasTokens((body as Answer).usage?.completion_tokens),
    };
  }
  if (kind === 'images') {
    return {
      origin,
      path: '/v1/images/generations',
      headers: bearer(key),
      body: JSON.stringify({ model: MEDIA_MODELS.images, prompt: PROMPT, n: 1, size: '1024x1024', response_format: 'b64_json' }),
      dialect: 'openai',
      isAnswer: (body) => {
        const { data } = body as Answer;
        return Array.isArray(data) && data.length === 1 && typeof data[0]?.b64_json === 'string' && data[0].b64_json.length > 0;
      },
    };
  }
  if (kind === 'gemini' || kind === 'gemini-vertex') {
    const { model } = CHANNEL_FACTS[kind === 'gemini' ? 'gemini' : 'vertex'];
    // `alt=sse` as the Google SDKs send it: the stream comes as server-sent events, like every other kind.
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return {
      origin,
      path: `/v1beta/models/${model}:${method}`,
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: PROMPT }] }],
        generationConfig: { maxOutputTokens: chunks, temperature: 0.7 },
      }),
      dialect: 'gemini',
      isAnswer: (body) => hasTokens((body as Answer).usageMetadata?.candidatesTokenCount),
    };
  }
  if (kind === 'chat-bedrock') return chatSurfaceCall('chat', CHANNEL_FACTS.bedrock.model, options);
  if (kind === 'chat-limited') {
    if (options.direct) return chatSurfaceCall('chat', CHANNEL_FACTS.openai.model, options);
    if (options.limitedKey === undefined) throw new Error(`${CALL_LABELS[kind]} needs the key with limits`);
    return chatSurfaceCall('chat', CHANNEL_FACTS.openai.model, { ...options, key: options.limitedKey });
  }
  const [surface, channel] = kind.split('-') as [ChatSurface, ChatChannel];
  // Direct, the fake is asked in the channel's own dialect (responses natively on OpenAI): the
  // baseline of what the gateway relays.
  const sent: ChatSurface = !options.direct ? surface : channel === 'anthropic' ? 'messages' : surface === 'responses' ? 'responses' : 'chat';
  return chatSurfaceCall(sent, CHANNEL_FACTS[channel].model, options);
}
