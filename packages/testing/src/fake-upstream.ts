// A local stand-in for model providers: OpenAI `/v1/completions` (whole and streamed, with usage)
// and Gemini `generateContent` / `streamGenerateContent` (text and text-to-speech audio), with the
// faults a relay must survive. Also the upstream of `pnpm bench`, so the success path is lean.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// The subpath, not the package: the fake stays free of Express and prom-client.
import { drainedOrClosed } from '@modelgate/http/backpressure';

export const FAKE_MODES = [
  'ok',
  /** 200 without any usage object (OpenAI) / usageMetadata (Gemini). */
  'noUsage',
  'error400',
  'error401',
  'error403',
  'error429',
  /** 429 "You exceeded your current quota" (OpenAI `insufficient_quota`). */
  'quotaExhausted',
  'error500',
  /** The connection is destroyed before any response byte. */
  'reset',
  /** Headers and two chunks, then the connection is destroyed. */
  'resetMidStream',
  /** Never answers (until the client gives up). */
  'hangBeforeHeaders',
  /** Headers and two chunks, then silence. */
  'hangMidStream',
  /** One good event, then an event whose data is not JSON (whole answers: truncated JSON). */
  'malformedSse',
  /** Chunks with `chunkDelayMs` (default 200 ms) between them. */
  'slowDrip',
] as const;
export type FakeMode = (typeof FAKE_MODES)[number];

export interface FakeUpstreamOptions {
  mode?: FakeMode;
  /** Text pieces per answer (one token each: " hello"); also the completion token count. Default 5. */
  chunks?: number;
  /** Delay between streamed chunks in ms (default 0; `slowDrip` default 200). */
  chunkDelayMs?: number;
  /** Length of the TTS audio returned, in ms (default 1000; 25 audio tokens per second). */
  audioMs?: number;
  /** Keep every request in `requests` (default true; the benchmark turns it off). */
  record?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
  dialect: 'openai' | 'gemini';
  mode: FakeMode;
  /** Chunks (stream pieces) written so far. */
  chunksSent: number;
  /** The connection or response closed (set when it happens). */
  closed: boolean;
  closedAt?: number;
  /** The whole answer was written. */
  completed: boolean;
}

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Changes the mode (and other options) for the following requests. */
  setMode(mode: FakeMode, options?: Omit<FakeUpstreamOptions, 'mode' | 'record'>): void;
  close(): Promise<void>;
}

/** Per request, the body field `fake_mode` or the header `x-fake-mode` overrides the server's mode. */
const MODE_FIELD = 'fake_mode';
const MODE_HEADER = 'x-fake-mode';
const PIECE = ' hello';
const AUDIO_TOKENS_PER_SECOND = 25;
const SAMPLE_RATE = 24_000;

const OPENAI_ERRORS: Record<string, [number, (key: string) => object]> = {
  error400: [400, (key) => ({
    error: {
      message: `Invalid value for 'temperature' (request with key ${key} to https://upstream.internal/v1/completions)`,
      type: 'invalid_request_error',
      param: 'temperature',
      code: 'invalid_value',
    },
  })],
  error401: [401, (key) => ({
    error: {
      message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  })],
  error403: [403, () => ({
    error: { message: 'Your organization is not allowed to use this model.', type: 'invalid_request_error', param: null, code: 'unsupported_country_region_territory' },
  })],
  error429: [429, () => ({
    error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' },
  })],
  quotaExhausted: [429, () => ({
    error: {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    },
  })],
  error500: [500, () => ({
    error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null },
  })],
};

const GEMINI_ERRORS: Record<string, [number, (key: string) => object]> = {
  error400: [400, (key) => ({
    error: { code: 400, message: `Invalid JSON payload received with key ${key} at https://upstream.internal/v1beta`, status: 'INVALID_ARGUMENT' },
  })],
  error401: [401, () => ({ error: { code: 401, message: 'API key not valid. Please pass a valid API key.', status: 'UNAUTHENTICATED' } })],
  error403: [403, () => ({ error: { code: 403, message: 'Permission denied: consumer has been suspended.', status: 'PERMISSION_DENIED' } })],
  error429: [429, () => ({ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } })],
  quotaExhausted: [429, () => ({
    error: { code: 429, message: 'You exceeded your current quota, please check your plan and billing details.', status: 'RESOURCE_EXHAUSTED' },
  })],
  error500: [500, () => ({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } })],
};

const pcmCache = new Map<number, string>();
/** Deterministic 16-bit mono PCM at 24 kHz (a 440 Hz tone), base64, as Gemini TTS returns it. */
export function fakePcmBase64(durationMs: number): string {
  let cached = pcmCache.get(durationMs);
  if (!cached) {
    const samples = Math.round((SAMPLE_RATE * durationMs) / 1000);
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), i * 2);
    cached = pcm.toString('base64');
    pcmCache.set(durationMs, cached);
  }
  return cached;
}

function wordsIn(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

/** Prompt tokens as this fake counts them: token-id arrays exactly, text one token per word. */
function openAiPromptTokens(prompt: unknown): number {
  if (typeof prompt === 'string') return wordsIn(prompt);
  if (!Array.isArray(prompt)) return 0;
  let total = 0;
  for (const item of prompt) {
    if (typeof item === 'number') total += 1;
    else if (typeof item === 'string') total += wordsIn(item);
    else if (Array.isArray(item)) total += item.length;
  }
  return total;
}

function geminiPromptTokens(body: Record<string, unknown>): number {
  let total = 0;
  const contents = Array.isArray(body.contents) ? body.contents : [];
  for (const content of contents) {
    const parts = (content as { parts?: unknown })?.parts;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const text = (part as { text?: unknown })?.text;
      total += typeof text === 'string' ? wordsIn(text) : 258;
    }
  }
  return total;
}

function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startFakeUpstream(initial: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const record = initial.record ?? true;
  let settings: Required<Omit<FakeUpstreamOptions, 'record'>> = {
    mode: initial.mode ?? 'ok',
    chunks: initial.chunks ?? 5,
    chunkDelayMs: initial.chunkDelayMs ?? 0,
    audioMs: initial.audioMs ?? 1000,
  };
  const requests: RecordedRequest[] = [];
  let sequence = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readRequestBody(req);
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const dialect = path.endsWith('/v1/completions') ? 'openai' : path.includes(':') ? 'gemini' : undefined;
    if (req.method !== 'POST' || !dialect) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
      return;
    }
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
    const requested = (json?.[MODE_FIELD] ?? req.headers[MODE_HEADER]) as FakeMode | undefined;
    const mode = requested && (FAKE_MODES as readonly string[]).includes(requested) ? requested : settings.mode;
    const recorded: RecordedRequest = {
      method: req.method,
      url,
      path,
      headers: req.headers,
      body,
      json,
      dialect,
      mode,
      chunksSent: 0,
      closed: false,
      completed: false,
    };
    if (record) requests.push(recorded);
    res.on('close', () => {
      recorded.closed = true;
      recorded.closedAt = Date.now();
      recorded.completed = res.writableFinished;
    });

    if (!json) {
      sendJson(res, 400, dialect === 'openai'
        ? { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null } }
        : { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
      return;
    }
    if (mode === 'reset') {
      req.socket.destroy();
      return;
    }
    if (mode === 'hangBeforeHeaders') return;
    const errors = dialect === 'openai' ? OPENAI_ERRORS : GEMINI_ERRORS;
    const failure = errors[mode];
    if (failure) {
      const key = dialect === 'openai'
        ? String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '')
        : String(req.headers['x-goog-api-key'] ?? '');
      sendJson(res, failure[0], failure[1](key));
      return;
    }
    const chunkDelayMs = mode === 'slowDrip' && settings.chunkDelayMs === 0 ? 200 : settings.chunkDelayMs;
    const answer = dialect === 'openai'
      ? openAiAnswer(json, mode)
      : geminiAnswer(json, path, mode);
    if (!answer.stream) {
      if (mode === 'malformedSse') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer.whole.slice(0, Math.floor(answer.whole.length / 2)));
        return;
      }
      if (mode === 'hangMidStream' || mode === 'resetMidStream') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer.whole) });
        res.write(answer.whole.slice(0, 10));
        if (mode === 'resetMidStream') setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      res.writeHead(200, { 'content-type': answer.contentType, 'content-length': Buffer.byteLength(answer.whole) });
      res.end(answer.whole);
      recorded.chunksSent = answer.events.length;
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const separator = dialect === 'openai' ? '\n\n' : '\r\n\r\n';
    for (let i = 0; i < answer.events.length; i++) {
      if (res.destroyed) return;
      if (i === 2 && (mode === 'hangMidStream' || mode === 'resetMidStream')) {
        // Let the first chunks reach the client before the connection dies.
        if (mode === 'resetMidStream') setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      if (i === 1 && mode === 'malformedSse') {
        res.end(`data: {"choices": [{"text": "unterminated${separator}`);
        return;
      }
      const flowing = res.write(`data: ${answer.events[i]}${separator}`);
      recorded.chunksSent = i + 1;
      // Like a real server, wait while the reader is behind (a relay's backpressure shows here).
      if (!flowing) await drainedOrClosed(res);
      if (chunkDelayMs > 0 && i < answer.events.length - 1) await delay(chunkDelayMs);
    }
    if (res.destroyed) return;
    res.end(dialect === 'openai' ? 'data: [DONE]\n\n' : undefined);
  }

  interface Answer {
    stream: boolean;
    /** The whole JSON answer (non-stream). */
    whole: string;
    /** Event payloads (stream). */
    events: string[];
    contentType: string;
  }

  function openAiAnswer(body: Record<string, unknown>, mode: FakeMode): Answer {
    sequence += 1;
    const id = `cmpl-fake${sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const model = String(body.model);
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : settings.chunks;
    const pieces = Math.max(0, Math.min(settings.chunks, maxTokens));
    const promptTokens = openAiPromptTokens(body.prompt);
    const usage = { prompt_tokens: promptTokens, completion_tokens: pieces, total_tokens: promptTokens + pieces };
    const withUsage = mode !== 'noUsage';
    if (body.stream !== true) {
      const completion: Record<string, unknown> = {
        id,
        object: 'text_completion',
        created,
        model,
        choices: [{ text: PIECE.repeat(pieces), index: 0, logprobs: null, finish_reason: 'stop' }],
      };
      if (withUsage) completion.usage = usage;
      return { stream: false, whole: JSON.stringify(completion), events: [''], contentType: 'application/json' };
    }
    const events: string[] = [];
    for (let i = 0; i < pieces; i++) {
      events.push(JSON.stringify({
        id,
        object: 'text_completion',
        created,
        model,
        choices: [{ text: PIECE, index: 0, logprobs: null, finish_reason: i === pieces - 1 ? 'stop' : null }],
      }));
    }
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    if (withUsage && includeUsage) events.push(JSON.stringify({ id, object: 'text_completion', created, model, choices: [], usage }));
    return { stream: true, whole: '', events, contentType: 'text/event-stream' };
  }

  function geminiAnswer(body: Record<string, unknown>, path: string, mode: FakeMode): Answer {
    sequence += 1;
    const model = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1, path.lastIndexOf(':')));
    const stream = path.endsWith(':streamGenerateContent');
    const generationConfig = (body.generationConfig ?? {}) as { responseModalities?: unknown; maxOutputTokens?: unknown };
    const audio = Array.isArray(generationConfig.responseModalities) && generationConfig.responseModalities.includes('AUDIO');
    const promptTokens = geminiPromptTokens(body);
    const usageMetadata = (candidates: number, modality: 'TEXT' | 'AUDIO') => ({
      promptTokenCount: promptTokens,
      candidatesTokenCount: candidates,
      totalTokenCount: promptTokens + candidates,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
      candidatesTokensDetails: [{ modality, tokenCount: candidates }],
    });
    const withUsage = mode !== 'noUsage';
    const responseId = `fake-${sequence}`;
    if (audio) {
      const tokens = Math.ceil((settings.audioMs / 1000) * AUDIO_TOKENS_PER_SECOND);
      const response: Record<string, unknown> = {
        candidates: [{
          content: { parts: [{ inlineData: { mimeType: `audio/L16;codec=pcm;rate=${SAMPLE_RATE}`, data: fakePcmBase64(settings.audioMs) } }], role: 'model' },
          finishReason: 'STOP',
          index: 0,
        }],
        modelVersion: model,
        responseId,
      };
      if (withUsage) response.usageMetadata = usageMetadata(tokens, 'AUDIO');
      const whole = JSON.stringify(response);
      return { stream, whole, events: [whole], contentType: 'application/json; charset=UTF-8' };
    }
    const maxTokens = typeof generationConfig.maxOutputTokens === 'number' ? generationConfig.maxOutputTokens : settings.chunks;
    const pieces = Math.max(0, Math.min(settings.chunks, maxTokens));
    const safetyRatings = [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }];
    if (!stream) {
      const response: Record<string, unknown> = {
        candidates: [{ content: { parts: [{ text: PIECE.repeat(pieces) }], role: 'model' }, finishReason: 'STOP', index: 0, safetyRatings }],
        modelVersion: model,
        responseId,
      };
      if (withUsage) response.usageMetadata = usageMetadata(pieces, 'TEXT');
      return { stream: false, whole: JSON.stringify(response), events: [''], contentType: 'application/json; charset=UTF-8' };
    }
    const events: string[] = [];
    for (let i = 0; i < pieces; i++) {
      const last = i === pieces - 1;
      const chunk: Record<string, unknown> = {
        candidates: [{ content: { parts: [{ text: PIECE }], role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP', safetyRatings } : {}) }],
        modelVersion: model,
        responseId,
      };
      if (last && withUsage) chunk.usageMetadata = usageMetadata(pieces, 'TEXT');
      events.push(JSON.stringify(chunk));
    }
    return { stream: true, whole: '', events, contentType: 'text/event-stream' };
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  // Longer than the relay's pool idle time, so pooled connections are closed by the client side.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setMode(mode, options = {}) {
      settings = { ...settings, ...options, mode };
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
