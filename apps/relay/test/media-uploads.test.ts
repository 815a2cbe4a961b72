// docs/api.md 2.13: the multipart uploads of /v1/audio/transcriptions, /v1/audio/translations and
// /v1/images/edits. A form the relay cannot use is refused naming why; a body over
// MAX_REQUEST_BODY_MB is a 413, declared or not; an upload the client cuts off aborts the upstream
// call and costs nothing; a 20 MB upload reaches the upstream while it arrives, through a spool on
// disk, without the relay's memory growing by its size. No upload leaves its spool file behind.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createChannel } from '@modelgate/testing';
import { toFile } from 'openai';
import { consumeLogs, eventually, expectLedgerInvariant, harness, type RelayHarness, relaySuite, resetSuite, startRelay, upstream } from './harness';
import {
  expectNoSpoolLeft,
  expectNothingCharged,
  holdsOf,
  MEDIA_CHANNELS,
  mediaChannel,
  mediaCustomer,
  OPENAI,
  roundedUnits,
  sdkFailure,
  setMediaPrices,
  spoolFiles,
  START_QUOTA,
  unitCharge,
  USD_PER_UNIT,
  WAV_HEADER_BYTES,
  WAV_SAMPLE_RATE,
  wavFile,
  wavHeader,
} from './media-support';

const MAX_REQUEST_BODY_MB = 1;
const MB = 1024 * 1024;
const WHISPER = MEDIA_CHANNELS[OPENAI].models['whisper-1'];

relaySuite({ MAX_REQUEST_BODY_MB: String(MAX_REQUEST_BODY_MB) });

beforeEach(async () => {
  await resetSuite();
  await setMediaPrices();
});

/** The OpenAI-shaped error of a refused call made with fetch. */
async function refusal(response: Response) {
  return { status: response.status, body: (await response.json()) as { error: Record<string, unknown> } };
}

function openAIError(code: string, param: string | null = null, type = 'invalid_request_error') {
  return { error: { message: expect.any(String), type, param, code } };
}

/** A multipart POST by fetch, as a browser or another SDK would send it. */
function postForm(key: string, path: string, form: FormData) {
  return fetch(`${harness.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}

function wavBlob(seconds: number) {
  return new Blob([wavFile(seconds)], { type: 'audio/wav' });
}

const BOUNDARY = '----client-boundary-7f3a';

/** The text of a multipart part: a field, or a file's headers (its bytes follow). */
function fieldPart(name: string, value: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}

function filePartHead(name: string, filename: string, contentType: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`;
}

const CLOSING = `\r\n--${BOUNDARY}--\r\n`;

describe('a form the relay cannot use', () => {
  beforeEach(async () => {
    await mediaChannel(OPENAI, upstream.url);
    await harness.reloadCaches();
  });

  it.each(['/v1/audio/transcriptions', '/v1/audio/translations', '/v1/images/edits'])('%s: a JSON body, 400 naming the content type it needs', async (path) => {
    const { key, userId } = await mediaCustomer();
    const response = await fetch(`${harness.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'whisper-1', prompt: 'x' }),
    });
    const { status, body } = await refusal(response);
    expect(status).toBe(400);
    expect(body).toEqual(openAIError('invalid_json'));
    expect(body.error.message).toContain('multipart/form-data');
    expect(upstream.requests).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
  });

  it.each<[string, string, string, Record<string, string>]>([
    ['/v1/audio/transcriptions', 'no file', 'file', { model: 'whisper-1' }],
    ['/v1/audio/translations', 'no file', 'file', { model: 'whisper-1' }],
    ['/v1/images/edits', 'no image', 'image', { model: 'dall-e-3', prompt: 'a hat' }],
    ['/v1/images/edits', 'n = "zero"', 'n', { model: 'dall-e-3', prompt: 'a hat', n: 'zero' }],
    ['/v1/audio/transcriptions', 'temperature = "warm"', 'temperature', { model: 'whisper-1', temperature: 'warm' }],
    ['/v1/audio/transcriptions', 'no model', 'model', {}],
  ])('%s with %s: 400 naming %s, nothing sent upstream', async (path, _problem, param, fields) => {
    const { key, userId } = await mediaCustomer();
    const before = await spoolFiles();
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    // The route's file is there, unless it is what the form lacks.
    if (param !== 'file' && param !== 'image') form.append(path.includes('audio') ? 'file' : 'image', wavBlob(1), 'a.wav');
    const { status, body } = await refusal(await postForm(key, path, form));
    expect(status).toBe(400);
    expect(body).toEqual(openAIError('invalid_request', param));
    expect(body.error.message).toMatch(new RegExp(`^${param}: `));
    expect(upstream.requests).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
    await expectNoSpoolLeft(before);
  });
});

/** What a plain upstream saw of one upload: never held, only counted, with its first and last bytes. */
interface CountedUpload {
  headers: IncomingHttpHeaders;
  bytes: number;
  /** When the first body byte arrived (performance.now()). */
  firstByteAt: number | undefined;
  head: Buffer;
  tail: Buffer;
  /** The connection closed, with the body whole (`complete`) or cut off. */
  closed: boolean;
  complete: boolean;
}

const KEPT_BYTES = 512;
/** What the counting upstream reports having heard of any upload. */
const HEARD_SECONDS = 90;

/**
 * An upstream that reads an upload as it arrives and discards it, counting it (the fake parses a
 * whole form); once the body is whole it answers a transcription of HEARD_SECONDS.
 */
function startCountingUpstream(): Promise<{ url: string; uploads: CountedUpload[]; server: Server }> {
  const uploads: CountedUpload[] = [];
  const server = createServer((req, res) => {
    const upload: CountedUpload = { headers: req.headers, bytes: 0, firstByteAt: undefined, head: Buffer.alloc(0), tail: Buffer.alloc(0), closed: false, complete: false };
    uploads.push(upload);
    req.on('data', (chunk: Buffer) => {
      upload.firstByteAt ??= performance.now();
      if (upload.head.length < KEPT_BYTES) upload.head = Buffer.concat([upload.head, chunk.subarray(0, KEPT_BYTES - upload.head.length)]);
      upload.tail = Buffer.from(chunk.length >= KEPT_BYTES ? chunk.subarray(-KEPT_BYTES) : Buffer.concat([upload.tail, chunk]).subarray(-KEPT_BYTES));
      upload.bytes += chunk.length;
    });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ text: 'heard', usage: { type: 'duration', seconds: HEARD_SECONDS } }));
    });
    req.on('close', () => {
      upload.closed = true;
      upload.complete = req.complete;
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, uploads, server })));
}

let counting: Awaited<ReturnType<typeof startCountingUpstream>>;
beforeAll(async () => {
  counting = await startCountingUpstream();
});
afterAll(() => new Promise((resolve) => counting.server.close(resolve)));
beforeEach(() => {
  counting.uploads.length = 0;
});

async function withCountingChannel(relay: RelayHarness = harness) {
  await createChannel(harness.prisma, { type: OPENAI, baseUrl: counting.url, models: 'whisper-1', modelMapping: JSON.stringify({ 'whisper-1': WHISPER }) });
  await relay.reloadCaches();
}

const FILE_CHUNK = Buffer.alloc(64 * 1024, 0x80);

interface ChunkedUploadOptions {
  /** The client stops after this many bytes of the file and waits (the caller destroys the request). */
  cutAfter?: number;
  /** Told the file bytes sent so far, after each chunk the connection took; the client waits for what it returns. */
  onProgress?: (sent: number) => unknown;
}

/**
 * A transcription upload of a WAV of `fileBytes` in chunks (no Content-Length), `model` first, as
 * fast as the relay takes it: the client never holds the file. `sent` resolves when the client has
 * sent all of it (performance.now()).
 */
function uploadInChunks(relay: RelayHarness, key: string, fileBytes: number, { cutAfter, onProgress }: ChunkedUploadOptions = {}) {
  const client = httpRequest(`${relay.url}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  });
  const answered = new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
    client.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
    });
    client.on('error', reject);
  });
  const sent = (async () => {
    client.write(fieldPart('model', 'whisper-1') + filePartHead('file', 'long.wav', 'audio/wav'));
    client.write(wavHeader(fileBytes - WAV_HEADER_BYTES));
    for (let written = WAV_HEADER_BYTES; written < (cutAfter ?? fileBytes); ) {
      const chunk = FILE_CHUNK.subarray(0, Math.min(FILE_CHUNK.length, fileBytes - written));
      if (!client.write(chunk)) await once(client, 'drain');
      written += chunk.length;
      await onProgress?.(written);
    }
    if (cutAfter !== undefined) return undefined;
    await new Promise<void>((resolve) => client.end(CLOSING, resolve));
    return performance.now();
  })();
  // A caller that cuts the upload off awaits the failure itself; one answered early (a 413 with
  // `Connection: close`) has its connection closed by node's client, which then stops sending.
  answered.catch(() => undefined);
  sent.catch(() => undefined);
  return { client, answered, sent };
}

/**
 * V8's collector, exposed for this process when node was not started with --expose-gc: memory is
 * measured as what is held, without the garbage a stream leaves until V8 collects it (about as much
 * again as the bytes that passed, each read buffer being a new one).
 */
function garbageCollector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('a body over MAX_REQUEST_BODY_MB', () => {
  it('with a declared Content-Length: 413 request_too_large before it is read, nothing sent upstream or charged', async () => {
    await mediaChannel(OPENAI, upstream.url);
    await harness.reloadCaches();
    const { userId, openai } = await mediaCustomer();
    const before = await spoolFiles();
    const file = await toFile(wavFile((1.5 * MB) / WAV_SAMPLE_RATE), 'long.wav', { type: 'audio/wav' });
    const failure = await sdkFailure(openai.audio.transcriptions.create({ model: 'whisper-1', file }));
    expect(failure.status).toBe(413);
    expect(failure.error).toEqual({ message: expect.stringContaining(`request body exceeds ${MAX_REQUEST_BODY_MB} MB`), type: 'invalid_request_error', param: null, code: 'request_too_large' });
    expect(upstream.requests).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
    await expectNoSpoolLeft(before);
  });

  it('sent in chunks: 413 once past the limit, the upstream call it had started aborted, nothing charged', async () => {
    await withCountingChannel();
    const { key, userId } = await mediaCustomer();
    const before = await spoolFiles();
    // `model` comes first: the call goes upstream with the first bytes, before the limit passes.
    const { answered } = uploadInChunks(harness, key, 2 * MB, {
      onProgress: (sent) => sent >= 256 * 1024 && eventually(() => expect(counting.uploads).toHaveLength(1)),
    });
    const { status, body } = await answered;
    expect(status).toBe(413);
    expect(JSON.parse(body)).toEqual(openAIError('request_too_large'));
    const [upload] = counting.uploads;
    await eventually(() => expect(upload?.closed).toBe(true));
    expect(upload?.complete).toBe(false);
    // At most the limit's worth of the client's bytes, in the relay's own multipart (a few headers more).
    expect(upload?.bytes).toBeLessThan(MAX_REQUEST_BODY_MB * MB + 1024);
    await expectNothingCharged(userId, START_QUOTA);
    await expectNoSpoolLeft(before);
  });
});

it('an upload the client cuts off: the upstream call aborted, the reservation released, nothing charged', async () => {
  await withCountingChannel();
  const { key, userId } = await mediaCustomer();
  const before = await spoolFiles();
  const { client, answered } = uploadInChunks(harness, key, MAX_REQUEST_BODY_MB * MB, { cutAfter: 256 * 1024 });
  // The call is under way: reserved, spooled, and streaming to the upstream.
  const upload = await eventually(() => {
    const [first] = counting.uploads;
    expect(first?.bytes).toBeGreaterThan(0);
    return first!;
  });
  expect(await holdsOf(userId)).toHaveLength(1);
  expect((await spoolFiles()).filter((name) => !before.includes(name)).length).toBeGreaterThan(0);

  client.destroy();
  await expect(answered).rejects.toThrow();
  await eventually(() => expect(upload.closed).toBe(true));
  expect(upload.complete).toBe(false);
  await expectNothingCharged(userId, START_QUOTA);
  await expectNoSpoolLeft(before);
});

describe('a 20 MB upload', () => {
  const FILE_BYTES = 20 * MB;
  /** How often the relay's memory is measured while the client sends. */
  const CHECKPOINT_BYTES = 4 * MB;
  /**
   * Buffer memory held after a collection (every byte of an upload lives in buffers): a few read
   * and write buffers in flight, far from the upload's size. The process's resident size is the
   * bench's measure (the relay alone in its process); here the test runner shares the process.
   */
  const MAX_HELD_GROWTH = 4 * MB;
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close());

  it('reaches the upstream while the client still sends it, whole, with the relay memory flat', async () => {
    await withCountingChannel(relay);
    const { key, userId } = await mediaCustomer();
    // The first call loads what any call needs (parsers, pools); that memory is not the upload's.
    expect((await uploadInChunks(relay, key, MB).answered).status).toBe(200);
    counting.uploads.length = 0;

    const gc = garbageCollector();
    const memory = () => {
      // Twice: buffers a collection finds dead are freed by the next one.
      gc();
      gc();
      return process.memoryUsage();
    };
    const baseline = memory();
    const growth: number[] = [];
    let checkpoint = CHECKPOINT_BYTES;
    const { answered, sent } = uploadInChunks(relay, key, FILE_BYTES, {
      onProgress: (bytes) => {
        if (bytes < checkpoint) return;
        checkpoint += CHECKPOINT_BYTES;
        growth.push(memory().arrayBuffers - baseline.arrayBuffers);
      },
    });
    const [{ status, body }, finishedAt] = await Promise.all([answered, sent]);

    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({ text: 'heard', usage: { type: 'duration', seconds: HEARD_SECONDS } });
    const [upload] = counting.uploads;
    if (!upload?.firstByteAt || finishedAt === undefined) throw new Error('the upstream got no upload');
    // Streamed, not stored and forwarded.
    expect(upload.firstByteAt).toBeLessThan(finishedAt);
    // The relay's own multipart: `model` (the channel's name) first, then the file, whole.
    const boundary = /boundary=(.+)$/.exec(String(upload.headers['content-type']))?.[1] ?? '';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${WHISPER}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    expect(upload.head.toString('latin1')).toBe(`${head}${wavHeader(FILE_BYTES - WAV_HEADER_BYTES).toString('latin1')}${'\x80'.repeat(KEPT_BYTES - Buffer.byteLength(head) - WAV_HEADER_BYTES)}`);
    expect(upload.tail.toString('latin1').endsWith(tail)).toBe(true);
    expect(upload.bytes).toBe(Buffer.byteLength(head) + FILE_BYTES + Buffer.byteLength(tail));
    expect(upload.complete).toBe(true);

    expect(growth).toHaveLength(FILE_BYTES / CHECKPOINT_BYTES);
    expect(Math.max(...growth)).toBeLessThan(MAX_HELD_GROWTH);

    await relay.relay.ledger.flush();
    const rows = await consumeLogs(harness.prisma);
    expect(rows.at(-1)).toMatchObject({ userId, quota: BigInt(-unitCharge(USD_PER_UNIT['whisper-1'], roundedUnits(HEARD_SECONDS / 60))) });
    await expectLedgerInvariant(harness.prisma);
  });
});
