import type { RequestSpec } from './load';

/** The chat channels the seeded stack has, each with the model it serves. */
export const CHAT_CHANNELS = ['openai', 'anthropic'] as const;
export type ChatChannel = (typeof CHAT_CHANNELS)[number];

/**
 * What the bench sends: a completion, a chat completion or an Anthropic message through one of the
 * chat channels (chat passes through the OpenAI one, messages through the Anthropic one).
 */
export type CallKind = 'completions' | `chat-${ChatChannel}` | `messages-${ChatChannel}`;
export const CHAT_KINDS = ['chat-openai', 'chat-anthropic'] as const satisfies readonly CallKind[];
export const MESSAGES_KINDS = ['messages-anthropic', 'messages-openai'] as const satisfies readonly CallKind[];
export const CALL_KINDS: readonly CallKind[] = ['completions', ...CHAT_KINDS, ...MESSAGES_KINDS];

export const CHAT_CHANNEL_FACTS: Record<ChatChannel, { type: 1 | 14; model: string; label: string }> = {
  openai: { type: 1, model: 'gpt-4o-mini', label: 'OpenAI channel, pass-through' },
  anthropic: { type: 14, model: 'claude-sonnet-4-5', label: 'Anthropic channel, translated' },
};

export const CALL_LABELS: Record<CallKind, string> = {
  completions: 'completions',
  'chat-openai': `chat (${CHAT_CHANNEL_FACTS.openai.label})`,
  'chat-anthropic': `chat (${CHAT_CHANNEL_FACTS.anthropic.label})`,
  'messages-anthropic': 'messages (Anthropic channel, pass-through)',
  'messages-openai': 'messages (OpenAI channel, translated)',
};

/**
 * The wire dialect of an answer: OpenAI completions and chat (through the gateway, and the fake's
 * own OpenAI routes), or Anthropic messages (the fake's own route, the direct baseline of the
 * translated channel).
 */
export type AnswerDialect = 'openai' | 'anthropic';

/** One request kind as sent to one target: the request, and the dialect its answer comes in. */
export interface Call extends RequestSpec {
  dialect: AnswerDialect;
  /** True when a whole (non-streamed) answer is what the call must produce, with usage. */
  isAnswer(body: unknown): boolean;
}

export interface CallOptions {
  origin: string;
  /** The fake upstream itself, not the gateway. */
  direct: boolean;
  /** The gateway's API key (the fake accepts any). */
  key: string;
  /** Model of the completions calls. */
  completionsModel: string;
  /** Tokens (one per upstream chunk) each answer has. */
  chunks: number;
  stream: boolean;
}

/** The same prompt in every kind, so the kinds differ only in their surface and channel. */
const PROMPT = 'Say hello to the benchmark';

type Answer = { object?: unknown; type?: unknown; usage?: { completion_tokens?: unknown; output_tokens?: unknown } };

const hasTokens = (value: unknown): boolean => typeof value === 'number' && value > 0;

/** The request of `kind` for one target: the fake upstream direct is called in the channel's own dialect. */
export function callOf(kind: CallKind, options: CallOptions): Call {
  const { origin, key, chunks, stream } = options;
  const common = { max_tokens: chunks, temperature: 0.7, stream };
  if (kind === 'completions') {
    return {
      origin,
      path: '/v1/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: options.completionsModel, prompt: PROMPT, ...common }),
      dialect: 'openai',
      isAnswer: (body) => (body as Answer).object === 'text_completion' && hasTokens((body as Answer).usage?.completion_tokens),
    };
  }
  const channel: ChatChannel = kind.endsWith('-openai') ? 'openai' : 'anthropic';
  const { model } = CHAT_CHANNEL_FACTS[channel];
  const messages = [{ role: 'user', content: PROMPT }];
  // Direct, the fake is asked in the channel's own dialect: the baseline of what the gateway relays.
  const anthropicDialect = options.direct ? channel === 'anthropic' : kind.startsWith('messages-');
  if (anthropicDialect) {
    return {
      origin,
      path: '/v1/messages',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, messages, ...common }),
      dialect: 'anthropic',
      isAnswer: (body) => (body as Answer).type === 'message' && hasTokens((body as Answer).usage?.output_tokens),
    };
  }
  return {
    origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages, ...common }),
    dialect: 'openai',
    isAnswer: (body) => (body as Answer).object === 'chat.completion' && hasTokens((body as Answer).usage?.completion_tokens),
  };
}
