// The one HTTP server behind every fake provider: routes POSTs by path to the provider modules,
// records each request (multipart/form-data bodies parsed into `form`), runs the provider's request
// check (credentials, signatures), picks the mode (body or form field `fake_mode`, header
// `x-fake-mode`, else the server's, set by `setMode`) and plays the
// faults every provider shares. Also the upstream of `pnpm bench`, so the success path stays lean.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// The subpath, not the package: the fake stays free of Express and prom-client.
import { drainedOrClosed } from '@modelgate/http/backpressure';
import { anthropicProvider } from './anthropic';
import { azureProvider } from './azure';
import { bedrockProvider } from './bedrock';
import { geminiProvider } from './gemini';
import { openAiProvider } from './openai';
import {
  type Dialect,
  type ErrorReply,
  FAKE_MODES,
  FAKE_TEXT_PIECE,
  type FakeMode,
  type FakeProvider,
  type FakeSettings,
  type FakeUpstreamOptions,
  isObject,
  type JsonObject,
  type Operation,
  OVERSIZED_PADDING,
  type PlainRoute,
  type RecordedRequest,
  SSE_FRAMING,
  type StreamAnswer,
  type StreamEvent,
  type UploadedFile,
  type WholeAnswer,
} from './shared';
import { VERTEX_TOKEN_PATH, vertexAnthropicProvider, vertexGeminiProvider, vertexTokenRoute } from './vertex';

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Changes the mode (and the given options; the others keep their values) for the following requests. */
  setMode(mode: FakeMode, options?: Omit<FakeUpstreamOptions, 'mode' | 'record'>): void;
  close(): Promise<void>;
}

/** Per request, the body field `fake_mode` or the header `x-fake-mode` overrides the server's mode. */
const MODE_FIELD = 'fake_mode';
const MODE_HEADER = 'x-fake-mode';
/** Per request, the body field `fake_chunk_delay_ms` overrides the delay between streamed chunks (slow streams among fast ones). */
const CHUNK_DELAY_FIELD = 'fake_chunk_delay_ms';
// The cloud providers first: the others match paths by their ending (`/openai/v1/responses` is Azure's).
const PROVIDERS: readonly FakeProvider[] = [
  azureProvider,
  bedrockProvider,
  vertexGeminiProvider,
  vertexAnthropicProvider,
  openAiProvider,
  anthropicProvider,
  geminiProvider,
];
const PLAIN_ROUTES: ReadonlyMap<string, PlainRoute> = new Map([[VERTEX_TOKEN_PATH, vertexTokenRoute]]);
const MID_STREAM_FAULTS: ReadonlySet<FakeMode> = new Set(['hangMidStream', 'resetMidStream', 'errorMidStream', 'endMidStream', 'oversized']);

function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, { status, body, headers }: ErrorReply): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendWhole(res: ServerResponse, answer: WholeAnswer): void {
  res.writeHead(answer.status, { ...answer.headers, 'content-type': answer.contentType, 'content-length': Buffer.byteLength(answer.body) });
  res.end(answer.body);
}

function parseObject(body: Buffer): JsonObject | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

interface ParsedForm {
  fields: Record<string, string>;
  files: UploadedFile[];
}

/** A multipart/form-data body parsed by the platform's WHATWG `Request` (the fake may hold uploads whole); undefined when broken. */
async function parseForm(body: Buffer, contentType: string): Promise<ParsedForm | undefined> {
  let entries: FormData;
  try {
    entries = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
  } catch {
    return undefined;
  }
  const form: ParsedForm = { fields: {}, files: [] };
  for (const [name, value] of entries) {
    if (typeof value === 'string') form.fields[name] = value;
    else form.files.push({ name, filename: value.name, size: value.size, contentType: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
  }
  return form;
}

function routeOf(path: string): { provider: FakeProvider; operation: Operation } | undefined {
  for (const provider of PROVIDERS) {
    const operation = provider.operation(path);
    if (operation) return { provider, operation };
  }
  return undefined;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `head`, `bytes` of padding and `tail`, written as the reader takes them; stops when the connection closes. */
async function writeOversized(res: ServerResponse, head: StreamEvent, bytes: number, tail: StreamEvent): Promise<void> {
  res.write(head);
  for (let left = bytes; left > 0; left -= OVERSIZED_PADDING.length) {
    if (res.destroyed) return;
    if (!res.write(left >= OVERSIZED_PADDING.length ? OVERSIZED_PADDING : OVERSIZED_PADDING.subarray(0, left))) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end(tail);
}

export async function startFakeUpstream(initial: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const record = initial.record ?? true;
  const verifySignatures = initial.verifySignatures ?? true;
  let settings: FakeSettings = {
    mode: initial.mode ?? 'ok',
    chunks: initial.chunks ?? 5,
    chunkDelayMs: initial.chunkDelayMs ?? 0,
    audioMs: initial.audioMs ?? 1000,
    cachedTokens: initial.cachedTokens ?? 0,
    cacheWriteTokens: initial.cacheWriteTokens ?? 0,
    textPiece: initial.textPiece ?? FAKE_TEXT_PIECE,
    oversizedBytes: initial.oversizedBytes ?? 100 * 1024 * 1024,
    serverToolCalls: initial.serverToolCalls ?? 1,
    vertexTokenTtlSeconds: initial.vertexTokenTtlSeconds ?? 3600,
  };
  const requests: RecordedRequest[] = [];
  let sequence = 0;

  /** The request as recorded (kept in `requests` unless recording is off), updated as its response closes. */
  function track(req: IncomingMessage, res: ServerResponse, url: string, path: string, body: Buffer, json: JsonObject | undefined, dialect: Dialect, mode: FakeMode): RecordedRequest {
    const recorded: RecordedRequest = {
      method: 'POST',
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
    return recorded;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readRequestBody(req);
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const plain = req.method === 'POST' ? PLAIN_ROUTES.get(path) : undefined;
    if (plain) return sendWhole(res, plain.answer(track(req, res, url, path, body, undefined, plain.dialect, 'ok'), settings));
    const route = req.method === 'POST' ? routeOf(path) : undefined;
    if (!route) return sendJson(res, { status: 404, body: { error: { message: `no route ${req.method} ${path}` } } });
    const { provider, operation } = route;
    const contentType = req.headers['content-type'] ?? '';
    const form = contentType.startsWith('multipart/form-data') ? await parseForm(body, contentType) : undefined;
    const json = form ? undefined : parseObject(body);
    const input = form?.fields ?? json;
    const requested = input?.[MODE_FIELD] ?? req.headers[MODE_HEADER];
    const mode = typeof requested === 'string' && (FAKE_MODES as readonly string[]).includes(requested) ? (requested as FakeMode) : settings.mode;
    const recorded = track(req, res, url, path, body, json, provider.dialect, mode);
    if (form) {
      const files = form.files.map(({ name, filename, size, contentType: type }) => ({ name, filename, size, contentType: type }));
      recorded.form = { fields: form.fields, files };
    }

    const refused = await provider.checkRequest?.(recorded, { verifySignatures });
    if (refused) return sendJson(res, refused);
    if (!input) return sendJson(res, provider.invalidJson);
    if (mode === 'reset') {
      req.socket.destroy();
      return;
    }
    if (mode === 'hangBeforeHeaders') return;
    const key = provider.apiKey(req.headers, url);
    const failure = provider.faults[mode]?.(key);
    if (failure) return sendJson(res, failure);
    sequence += 1;
    const answer = operation(input, { settings, sequence, withUsage: mode !== 'noUsage', form });
    const chunkDelayMs = input[CHUNK_DELAY_FIELD];
    if (answer.stream) return stream(req, res, provider, answer, mode, recorded, typeof chunkDelayMs === 'number' ? chunkDelayMs : undefined);
    // A provider's own refusal (status not 200) goes out as it is; the faults break successes only.
    if (answer.status === 200 && mode !== 'ok') {
      // There is no stream to break: a whole answer gets the error a provider sends instead.
      const overloaded = mode === 'errorMidStream' ? provider.faults.overloaded?.(key) : undefined;
      if (overloaded) return sendJson(res, overloaded);
      if (mode === 'malformedSse') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer.body.slice(0, Math.floor(answer.body.length / 2)));
        return;
      }
      if (mode === 'oversized') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return writeOversized(res, '{"padding":"', settings.oversizedBytes, '"}');
      }
      if (mode === 'hangMidStream' || mode === 'resetMidStream') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer.body) });
        res.write(answer.body.slice(0, 10));
        if (mode === 'resetMidStream') setTimeout(() => req.socket.destroy(), 50);
        return;
      }
    }
    sendWhole(res, answer);
    recorded.chunksSent = 1;
  }

  async function stream(
    req: IncomingMessage,
    res: ServerResponse,
    provider: FakeProvider,
    answer: StreamAnswer,
    mode: FakeMode,
    recorded: RecordedRequest,
    requestedDelayMs: number | undefined,
  ): Promise<void> {
    const { events } = answer;
    const chunkDelayMs = requestedDelayMs ?? (mode === 'slowDrip' && settings.chunkDelayMs === 0 ? 200 : settings.chunkDelayMs);
    const cut = MID_STREAM_FAULTS.has(mode) ? Math.min(answer.cutAfter, events.length) : -1;
    const framing = provider.framing ?? SSE_FRAMING;
    res.writeHead(200, { ...answer.headers, 'content-type': answer.contentType ?? framing.contentType, 'cache-control': 'no-cache' });
    for (let i = 0; ; i++) {
      if (res.destroyed) return;
      if (i === cut) {
        if (mode === 'errorMidStream') res.end(answer.errorEvent ?? provider.errorEvent);
        else if (mode === 'endMidStream') res.end();
        else if (mode === 'oversized') {
          const { head, tail } = framing.oversized(settings.oversizedBytes);
          await writeOversized(res, head, settings.oversizedBytes, tail);
        }
        // Let the first chunks reach the client before the connection dies.
        else if (mode === 'resetMidStream') setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      if (i === events.length) break;
      if (i === 1 && mode === 'malformedSse') {
        res.end(provider.malformedEvent);
        return;
      }
      const flowing = res.write(events[i]);
      recorded.chunksSent = i + 1;
      // Like a real server, wait while the reader is behind (a relay's backpressure shows here).
      if (!flowing) await drainedOrClosed(res);
      if (chunkDelayMs > 0 && i < events.length - 1) await delay(chunkDelayMs);
    }
    res.end(answer.end);
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
