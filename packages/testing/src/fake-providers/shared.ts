// What the fake providers share: the modes, the options, the recorded request, the answer a provider
// module hands the server, and the deterministic content every provider answers with. Integration
// tests assert on these values, so they are exported (through `@modelgate/testing/fake-upstream`).
import type { IncomingHttpHeaders } from 'node:http';

export const FAKE_MODES = [
  'ok',
  /** 200 without any usage object (OpenAI `usage`, Anthropic `usage`, Gemini `usageMetadata`); token counts still answer. */
  'noUsage',
  'error400',
  'error401',
  'error403',
  'error429',
  /** "You exceeded your current quota" (OpenAI/Gemini 429; Anthropic 400 "credit balance is too low"). */
  'quotaExhausted',
  'error500',
  /** Overloaded: Anthropic 529 `overloaded_error`, OpenAI and Gemini 503. */
  'overloaded',
  /** The connection is destroyed before any response byte. */
  'reset',
  /** Headers and the first chunks (see `StreamAnswer.cutAfter`), then the connection is destroyed. */
  'resetMidStream',
  /** Never answers (until the client gives up). */
  'hangBeforeHeaders',
  /** Headers and the first chunks (see `StreamAnswer.cutAfter`), then silence. */
  'hangMidStream',
  /** One good event, then an event whose data is not JSON (Bedrock: a frame with a broken CRC; whole answers: truncated JSON). */
  'malformedSse',
  /** Chunks with `chunkDelayMs` (default 200 ms) between them. */
  'slowDrip',
  /**
   * Streams: the first chunks (see `StreamAnswer.cutAfter`), then the provider's in-stream error event,
   * then the response ends. Whole answers: the same reply as `overloaded`.
   */
  'errorMidStream',
  /** Streams: the first chunks (see `StreamAnswer.cutAfter`), then a clean end without the provider's end marker. */
  'endMidStream',
  /**
   * An answer of `oversizedBytes`, written in pieces as it is read (never held whole): whole answers
   * a JSON object with one long string; streams the first chunks (see `StreamAnswer.cutAfter`), then
   * one event of that size.
   */
  'oversized',
  /**
   * Azure OpenAI: the 400 `content_filter` refusal Azure sends when the prompt trips its content
   * filter. The other providers answer as in `ok`.
   */
  'contentFilter',
] as const;
export type FakeMode = (typeof FAKE_MODES)[number];

/**
 * The fake provider that answered. The cloud ones answer in the dialect of the model behind them:
 * Azure OpenAI's; Bedrock InvokeModel's and Vertex rawPredict's Anthropic; Vertex Gemini's Gemini
 * (Bedrock Converse is Bedrock's own).
 */
export type Dialect = 'openai' | 'anthropic' | 'gemini' | 'azure' | 'bedrock' | 'vertex';

export interface FakeUpstreamOptions {
  mode?: FakeMode;
  /** Text pieces per answer (one token each: " hello"); also the text's completion token count. Default 5. */
  chunks?: number;
  /** Delay between streamed chunks in ms (default 0; `slowDrip` default 200). */
  chunkDelayMs?: number;
  /** Length of the TTS audio returned, in ms (default 1000; 25 audio tokens per second). */
  audioMs?: number;
  /**
   * Prompt tokens read from the provider's cache, on top of the tokens counted from the request
   * (chat routes: OpenAI chat, Anthropic messages, Gemini generateContent, Bedrock Converse). Default 0.
   */
  cachedTokens?: number;
  /** Prompt tokens written to the provider's cache, on top of the counted ones (same routes). Default 0. */
  cacheWriteTokens?: number;
  /** The text of every piece an answer is made of (default FAKE_TEXT_PIECE; token counts stay one per piece). */
  textPiece?: string;
  /** The size of an `oversized` answer or event, in bytes (default 100 MB). */
  oversizedBytes?: number;
  /**
   * Server tool calls an answer reports when the request offers the provider's search tool (Anthropic
   * `web_search_*`: `usage.server_tool_use.web_search_requests`; Responses `web_search` /
   * `web_search_preview`: that many `web_search_call` items; Gemini `googleSearch`: grounding
   * metadata with that many queries). Default 1.
   */
  serverToolCalls?: number;
  /** `expires_in` of the access tokens the fake Vertex token endpoint issues, in seconds (default 3600). */
  vertexTokenTtlSeconds?: number;
  /** Keep every request in `requests` (default true; the benchmark turns it off). */
  record?: boolean;
  /**
   * Check request signatures (SigV4) by signing again (default true; the benchmark turns it off:
   * re-signing costs the fake more than the relay spends signing, which skews the relay's figures).
   */
  verifySignatures?: boolean;
}

export type FakeSettings = Required<Omit<FakeUpstreamOptions, 'record' | 'verifySignatures'>>;

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
  dialect: Dialect;
  /** What a cloud route read from the request (filled as the credentials are checked). */
  cloud?: CloudRequest;
  /** A multipart/form-data body as parsed (the media routes); `json` is then undefined. */
  form?: RecordedForm;
  mode: FakeMode;
  /** Chunks (stream pieces) written so far. */
  chunksSent: number;
  /** The connection or response closed (set when it happens). */
  closed: boolean;
  closedAt?: number;
  /** The whole answer was written. */
  completed: boolean;
}

/** A multipart/form-data body: its text fields (the last of a repeated name) and its files in order. */
export interface RecordedForm {
  fields: Record<string, string>;
  files: RecordedFile[];
}

export interface RecordedFile {
  /** The form field (`image`, `image[]`, `mask`, `file`). */
  name: string;
  filename: string;
  size: number;
  contentType: string;
}

/** An uploaded file with its bytes, as the operations read it. */
export interface UploadedFile extends RecordedFile {
  bytes: Buffer;
}

/** What a cloud route read from the request. */
export interface CloudRequest {
  /** The Azure deployment, the Bedrock model id (decoded) or the Vertex model, from the path. */
  model?: string;
  /** Bedrock: the region of the SigV4 credential scope; Vertex: the location of the path. */
  region?: string;
  /** Vertex: the project of the path. */
  project?: string;
  /** How the request authenticated: Azure `api-key`, Bedrock SigV4 or API key, Vertex OAuth token. */
  auth?: 'api-key' | 'sigv4' | 'bearer';
}

export type JsonObject = Record<string, unknown>;

/** A stream event as written: text (server-sent events) or bytes (AWS event-stream frames). */
export type StreamEvent = string | Uint8Array;

/** A JSON answer in one piece (also a provider's own validation error). */
export interface WholeAnswer {
  stream: false;
  status: number;
  body: string;
  contentType: string;
  /** More response headers (Bedrock's `x-amzn-ErrorType` on its validation errors). */
  headers?: Record<string, string>;
}

export interface StreamAnswer {
  stream: true;
  /** Whole events, framing included (`data: ...` and the provider's separator, or event-stream frames). */
  events: StreamEvent[];
  /** Written after the last event (OpenAI's `data: [DONE]`), if anything. */
  end?: StreamEvent;
  /**
   * How many events go out before a mid-stream fault strikes: up to and including the second text
   * piece, or in a tool-call answer the first piece of the arguments (Gemini: everything before the
   * functionCall chunk).
   */
  cutAfter: number;
  /**
   * What `errorMidStream` ends the stream with instead of the provider's `errorEvent` (Responses
   * events carry the stream's sequence numbers and response id).
   */
  errorEvent?: StreamEvent;
  /** More response headers (Bedrock's `x-amzn-bedrock-content-type`). */
  headers?: Record<string, string>;
  /** The content type when it is not the provider's stream framing's (audio bytes). */
  contentType?: string;
}

export type Answer = WholeAnswer | StreamAnswer;

export interface AnswerContext {
  settings: FakeSettings;
  /** The server's answer counter (1 for the first answer): the `<n>` of ids like `call_fake<n>`. */
  sequence: number;
  /** False in `noUsage` mode. */
  withUsage: boolean;
  /** The files of a multipart body (its text fields are the operation's body). */
  form?: { files: UploadedFile[] };
}

/** Builds the answer of one route from the parsed request body (JSON, or a multipart body's text fields). */
export type Operation = (body: JsonObject, context: AnswerContext) => Answer;

export interface ErrorReply {
  status: number;
  body: unknown;
  /** More response headers (AWS's `x-amzn-ErrorType`). */
  headers?: Record<string, string>;
}

/** A provider's error reply per fault mode (the modes that are plain errors); `key` is the request's API key. */
export type FaultReplies = Partial<Record<FakeMode, (key: string) => ErrorReply>>;

/** What a provider module tells the server; the server owns HTTP, recording and the shared faults. */
export interface FakeProvider {
  dialect: Dialect;
  /** The operation serving this path (no query), or undefined when the path is not this provider's. */
  operation(path: string): Operation | undefined;
  /** The API key the request carries, echoed by some error messages as the real providers do. */
  apiKey(headers: IncomingHttpHeaders, url: string): string;
  /**
   * A refusal decided before the body is answered and before any mode (required headers and query
   * parameters, credentials, signatures); may fill `request.cloud`.
   */
  checkRequest?(request: RecordedRequest, options: { verifySignatures: boolean }): ErrorReply | undefined | Promise<ErrorReply | undefined>;
  /** The answer to a body that is not a JSON object. */
  invalidJson: ErrorReply;
  /** The provider's error replies; the modes without one are not plain errors. */
  faults: FaultReplies;
  /** An event whose data is not JSON (`malformedSse`), framing included. */
  malformedEvent: StreamEvent;
  /** The provider's in-stream error event (`errorMidStream`), framing included. */
  errorEvent: StreamEvent;
  /** How its streams are framed (default `SSE_FRAMING`). */
  framing?: StreamFraming;
}

/** The piece `oversized` answers are written in. */
export const OVERSIZED_PADDING = Buffer.alloc(64 * 1024, 'a');

/** A provider's stream framing. */
export interface StreamFraming {
  contentType: string;
  /** The `oversized` event: `head`, then `bytes` of `OVERSIZED_PADDING` (written by the server), then `tail`. */
  oversized(bytes: number): { head: StreamEvent; tail: StreamEvent };
}

export const SSE_FRAMING: StreamFraming = {
  contentType: 'text/event-stream',
  oversized: () => ({ head: 'data: {"padding":"', tail: '"}\n\n' }),
};

/** A route outside the model flow (Vertex's token exchange): answered from the raw request, in every mode. */
export interface PlainRoute {
  dialect: Dialect;
  answer(request: RecordedRequest, settings: FakeSettings): WholeAnswer;
}

/** The text piece every answer is made of, one token each. */
export const FAKE_TEXT_PIECE = ' hello';
/** The reasoning text of answers that reason (Anthropic thinking, Gemini thoughts, OpenAI reasoning_content). */
export const FAKE_THOUGHT = 'Let me think.';
/** The tokens `FAKE_THOUGHT` costs (completion/output tokens; Gemini `thoughtsTokenCount`). */
export const FAKE_THOUGHT_TOKENS = 3;
/** The arguments of every tool call the fakes make. */
export const FAKE_TOOL_ARGUMENTS = { city: 'Paris' } as const;
/** `FAKE_TOOL_ARGUMENTS` as JSON text, streamed in these two pieces (their concatenation is the JSON). */
export const FAKE_TOOL_ARGUMENT_PIECES = ['{"city":', '"Paris"}'] as const;
/** The completion tokens of a tool call. */
export const FAKE_TOOL_CALL_TOKENS = 10;
/** A 1x1 transparent PNG: every image the fakes answer (OpenAI images, Gemini image models). */
export const FAKE_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** The word that flags a text for moderation, and that blocks a Gemini image model's image. */
export const FAKE_FLAGGED_WORD = 'kill';
/** Prompt tokens of one image / audio / file part. */
export const MEDIA_PART_TOKENS = 258;
/** Vector length of an embedding when the request names none. */
export const DEFAULT_EMBEDDING_DIMENSIONS = 8;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The token of `Authorization: Bearer <token>` ('' without one). */
export const bearerToken = (headers: IncomingHttpHeaders): string => String(headers.authorization ?? '').replace(/^Bearer\s+/i, '');

export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export function wordsIn(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

/** Words of a tool call's arguments or a tool result given as an object: its JSON text. */
export const wordsInJson = (value: unknown): number => wordsIn(JSON.stringify(value ?? {}));

/** How many text pieces an answer carries, and whether the request's token limit cut it short. */
export function textPieces(settings: FakeSettings, maxTokens: unknown): { pieces: number; capped: boolean } {
  const limit = typeof maxTokens === 'number' ? maxTokens : settings.chunks;
  const pieces = Math.max(0, Math.min(settings.chunks, limit));
  return { pieces, capped: pieces < settings.chunks };
}

/**
 * The tool a request gets called: the forced one, else the first offered; none when the request
 * offers no tools, forbids calls, or ends with a tool result (then the answer is text).
 */
export function toolToCall(offered: string[], forced: string | undefined, forbidden: boolean, endsWithToolResult: boolean): string | undefined {
  if (forbidden || endsWithToolResult) return undefined;
  return forced ?? offered[0];
}

/**
 * A deterministic embedding: `values[j] = Math.fround(Math.sin(seed + j))` with `seed` the FNV-1a
 * 32-bit hash of the text. Float32 values, so the base64 encoding decodes to the same numbers.
 */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  let seed = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    seed ^= text.charCodeAt(i);
    seed = Math.imul(seed, 0x01000193) >>> 0;
  }
  return Array.from({ length: dimensions }, (_, j) => Math.fround(Math.sin(seed + j)));
}

/** A requested vector length when it is a positive integer, else the default. */
export const embeddingDimensions = (requested: unknown): number =>
  typeof requested === 'number' && Number.isInteger(requested) && requested > 0 ? requested : DEFAULT_EMBEDDING_DIMENSIONS;

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A server-sent event with an `event:` line (Anthropic and OpenAI Responses name every event). */
export const namedEvent = (type: string, payload: unknown): string => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;

export const jsonAnswer = (body: unknown, contentType = 'application/json', status = 200): WholeAnswer => ({
  stream: false,
  status,
  body: JSON.stringify(body),
  contentType,
});

/** A provider's own refusal, answered by an operation (body rules the route checks itself). */
export const errorAnswer = ({ status, body, headers }: ErrorReply): WholeAnswer => ({ ...jsonAnswer(body, 'application/json', status), headers });
