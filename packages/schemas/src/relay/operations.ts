import type { Dialect } from '../channel-types';
import { z } from 'zod';
import { chatCompletionSchema } from './chat-completions';
import { completionRequestSchema } from './completions';
import { embeddingsSchema } from './embeddings';
import { generateContentSchema } from './generate-content';
import { imageEditFieldsSchema, imageGenerationSchema, moderationSchema, rerankSchema, speechSchema, transcriptionFieldsSchema } from './media';
import { countTokensSchema, messagesSchema } from './messages';
import { responsesSchema } from './responses';

/** One file part of a multipart/form-data body: sent as it is, never read whole by the relay (docs/api.md 2.13). */
export interface MultipartFile {
  description: string;
  /** The media types the part may have, e.g. `audio/*`. */
  contentType: string;
  required?: boolean;
  /** The field may be repeated (several files under one name). */
  repeated?: boolean;
}

/** An answer that is not JSON: its media type, whether it is bytes (audio) rather than text, and when it is sent. */
export interface RawAnswer {
  contentType: string;
  binary: boolean;
  description: string;
}

/**
 * One relay operation: the request schema the relay validates the body with, and what describes the
 * surface in the OpenAPI document (`GET /api/openapi.json`). Answers are the providers' objects:
 * `response` names their main fields only (loose objects), it is not a full schema of them.
 */
export interface RelayOperation {
  method: 'get' | 'post';
  /** Express style, e.g. `/v1beta/models/:model:generateContent`. */
  path: string;
  /**
   * Where the route takes the API key (docs/api.md 2, key table): `openai` Bearer only;
   * `anthropic` `x-api-key` or Bearer; `gemini` `x-goog-api-key`, `?key=` or Bearer.
   */
  key: Dialect;
  /** The error shape the route answers in (docs/api.md 1.3). */
  errors: Dialect;
  summary: string;
  /** The JSON body; for a multipart/form-data body (`multipart` set), its text fields. */
  body?: z.ZodType;
  /** Set when the body is multipart/form-data rather than JSON: its file parts, by field name. */
  multipart?: Readonly<Record<string, MultipartFile>>;
  /** An object schema: each property is one query parameter. */
  query?: z.ZodObject;
  /** An object schema: each property is one parameter of `path`. */
  params?: z.ZodObject;
  /** The JSON answer; absent when the operation only streams or answers only raw content. */
  response?: z.ZodType;
  /** Answers other than JSON and events (audio bytes, subtitles), each with when it is sent. */
  raw?: readonly RawAnswer[];
  /** Set when the operation answers server-sent events: what the events are (with `streamWhen`, or always). */
  stream?: string;
  /** What asks for the events when a request may ask; `"stream": true` when absent. */
  streamWhen?: string;
}

const usage = z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int().optional(), total_tokens: z.number().int() });

const completion = z.looseObject({
  id: z.string(),
  object: z.literal('text_completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.looseObject({ text: z.string(), index: z.number().int(), finish_reason: z.string().nullable() })),
  usage,
});

const chatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage,
});

const embeddingList = z.looseObject({
  object: z.literal('list'),
  data: z.array(z.looseObject({ object: z.literal('embedding'), index: z.number().int(), embedding: z.union([z.array(z.number()), z.string()]) })),
  model: z.string(),
  usage,
});

const response = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number(),
  status: z.string(),
  model: z.string(),
  output: z.array(z.looseObject({ type: z.string() })),
  usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).nullable(),
});

const message = z.looseObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable(),
  usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
});

/** docs/api.md 2.2: OpenAI's list, or Anthropic's when the request carries `anthropic-version`. */
const modelList = z.union([
  z.looseObject({
    object: z.literal('list'),
    data: z.array(z.looseObject({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })),
  }),
  z.looseObject({
    data: z.array(z.looseObject({ type: z.literal('model'), id: z.string(), display_name: z.string(), created_at: z.string() })),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
  }),
]);

const geminiModelList = z.looseObject({
  models: z.array(z.looseObject({ name: z.string(), displayName: z.string(), supportedGenerationMethods: z.array(z.string()) })),
});

const generateContentResponse = z.looseObject({
  candidates: z.array(z.looseObject({ content: z.looseObject({}).optional(), finishReason: z.string().optional() })).optional(),
  usageMetadata: z.looseObject({ promptTokenCount: z.number().int().optional(), candidatesTokenCount: z.number().int().optional() }).optional(),
});

/** docs/api.md 2.13: OpenAI's image answer; Gemini image models answer `b64_json`. */
const imagesResponse = z.looseObject({
  created: z.number().int(),
  data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() })),
  usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).optional(),
});

/** `json` answers `text` (and `usage` for the gpt-4o models); `verbose_json` adds `language`, `duration`, `segments`. */
const transcriptionResponse = z.looseObject({
  text: z.string(),
  language: z.string().optional(),
  duration: z.number().optional(),
  usage: z.looseObject({ type: z.string() }).optional(),
});

const moderationResponse = z.looseObject({
  id: z.string(),
  model: z.string(),
  results: z.array(z.looseObject({ flagged: z.boolean(), categories: z.record(z.string(), z.boolean()), category_scores: z.record(z.string(), z.number()) })),
});

const rerankResponse = z.looseObject({
  model: z.string(),
  results: z.array(
    z.looseObject({
      index: z.number().int(),
      relevance_score: z.number(),
      document: z.union([z.string(), z.looseObject({ text: z.string() })]).optional(),
    }),
  ),
  usage: z.looseObject({}).optional(),
});

const IMAGE_PARTS = 'image/png, image/jpeg, image/webp';

const imageEditFiles: Record<string, MultipartFile> = {
  image: { description: 'The image to edit; `image` or `image[]` is required. gpt-image models take up to 16, repeated', contentType: IMAGE_PARTS, repeated: true },
  'image[]': { description: 'Several images to edit (gpt-image models), as the OpenAI SDKs send them', contentType: IMAGE_PARTS, repeated: true },
  mask: { description: 'Where to edit: a PNG whose fully transparent areas are edited', contentType: 'image/png' },
};

const audioFile: Record<string, MultipartFile> = {
  file: {
    description: 'The audio (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm), up to MAX_REQUEST_BODY_MB (docs/api.md 5); passed on as it arrives',
    contentType: 'audio/*, video/mp4, video/webm',
    required: true,
  },
};

const SUBTITLES: RawAnswer = { contentType: 'text/plain', binary: false, description: 'with `response_format` `text`, `srt` or `vtt`: the text or subtitles' };

const modelParam = z.object({ model: z.string().min(1).describe('The model name, e.g. `gemini-2.5-flash`') });

const OPENAI_CHUNKS = '`data: <chunk JSON>` events ending with `data: [DONE]` (docs/api.md 2.1)';

/** docs/api.md 2.3: the two Gemini operations, under `/v1beta` and (for SDKs that use it) `/v1`. */
function geminiOperations(version: '/v1beta' | '/v1'): RelayOperation[] {
  const alias = version === '/v1' ? ' (`/v1` alias)' : '';
  return [
    {
      method: 'post',
      path: `${version}/models/:model:generateContent`,
      key: 'gemini',
      errors: 'gemini',
      summary: `Gemini generateContent: one answer${alias}`,
      params: modelParam,
      body: generateContentSchema,
      response: generateContentResponse,
    },
    {
      method: 'post',
      path: `${version}/models/:model:streamGenerateContent`,
      key: 'gemini',
      errors: 'gemini',
      summary: `Gemini streamGenerateContent: the answer as server-sent events${alias}`,
      params: modelParam,
      query: z.object({ alt: z.literal('sse').optional().describe('Accepted and implied: the stream is always server-sent events') }),
      body: generateContentSchema,
      stream: '`data: <GenerateContentResponse JSON>` events (docs/api.md 2.3)',
    },
  ];
}

/** Every relay operation (docs/api.md 2), each with the schema the relay validates its body with. */
export const RELAY_OPERATIONS: readonly RelayOperation[] = [
  {
    method: 'post',
    path: '/v1/completions',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI text completion (legacy)',
    body: completionRequestSchema,
    response: completion,
    stream: OPENAI_CHUNKS,
  },
  {
    method: 'post',
    path: '/v1/chat/completions',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI chat completion',
    body: chatCompletionSchema,
    response: chatCompletion,
    stream: OPENAI_CHUNKS,
  },
  {
    method: 'post',
    path: '/v1/embeddings',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI embeddings',
    body: embeddingsSchema,
    response: embeddingList,
  },
  {
    method: 'post',
    path: '/v1/responses',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI Responses API',
    body: responsesSchema,
    response,
    stream: '`event: <type>` / `data: <event JSON>` pairs, ending with `response.completed` (docs/api.md 2.10)',
  },
  {
    method: 'post',
    path: '/v1/messages',
    key: 'anthropic',
    errors: 'anthropic',
    summary: 'Anthropic Messages',
    body: messagesSchema,
    response: message,
    stream: '`event: <type>` / `data: <event JSON>` pairs, `message_start` to `message_stop` (docs/api.md 2.9)',
  },
  {
    method: 'post',
    path: '/v1/messages/count_tokens',
    key: 'anthropic',
    errors: 'anthropic',
    summary: 'Anthropic token count of a Messages request',
    body: countTokensSchema,
    response: z.looseObject({ input_tokens: z.number().int() }),
  },
  {
    method: 'get',
    path: '/v1/models',
    key: 'anthropic',
    errors: 'openai',
    summary: "The models the key can use: OpenAI's list, or Anthropic's when the request has an `anthropic-version` header",
    response: modelList,
  },
  {
    method: 'get',
    path: '/v1beta/models',
    key: 'gemini',
    errors: 'gemini',
    summary: 'The models of the key served by Gemini channels',
    response: geminiModelList,
  },
  ...geminiOperations('/v1beta'),
  ...geminiOperations('/v1'),
  {
    method: 'post',
    path: '/v1/images/generations',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI image generation (Gemini image models too)',
    body: imageGenerationSchema,
    response: imagesResponse,
    stream: '`event: image_generation.partial_image` ... `image_generation.completed` (gpt-image models, docs/api.md 2.13)',
  },
  {
    method: 'post',
    path: '/v1/images/edits',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI image edit (multipart)',
    body: imageEditFieldsSchema,
    multipart: imageEditFiles,
    response: imagesResponse,
    stream: '`event: image_edit.partial_image` ... `image_edit.completed` (gpt-image models, docs/api.md 2.13)',
    streamWhen: '`stream=true`',
  },
  {
    method: 'post',
    path: '/v1/audio/speech',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI text to speech: the audio, streamed back',
    body: speechSchema,
    raw: [{ contentType: 'audio/*', binary: true, description: "The audio in `response_format` (default mp3), with the upstream's content type, streamed as it arrives" }],
    stream: '`speech.audio.delta` ... `speech.audio.done` (gpt-4o-mini-tts, docs/api.md 2.13)',
    streamWhen: '`"stream_format": "sse"`',
  },
  {
    method: 'post',
    path: '/v1/audio/transcriptions',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI speech to text (multipart)',
    body: transcriptionFieldsSchema,
    multipart: audioFile,
    response: transcriptionResponse,
    raw: [SUBTITLES],
    stream: '`transcript.text.delta` ... `transcript.text.done` (gpt-4o transcribe models, docs/api.md 2.13)',
    streamWhen: '`stream=true`',
  },
  {
    method: 'post',
    path: '/v1/audio/translations',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI speech to English text (multipart)',
    body: transcriptionFieldsSchema,
    multipart: audioFile,
    response: transcriptionResponse,
    raw: [SUBTITLES],
  },
  {
    method: 'post',
    path: '/v1/moderations',
    key: 'openai',
    errors: 'openai',
    summary: 'OpenAI moderation',
    body: moderationSchema,
    response: moderationResponse,
  },
  {
    method: 'post',
    path: '/v1/rerank',
    key: 'openai',
    errors: 'openai',
    summary: 'Rerank documents by relevance to a query (Jina / Cohere)',
    body: rerankSchema,
    response: rerankResponse,
  },
];
