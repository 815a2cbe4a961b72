import http from 'node:http';
import { Readable } from 'node:stream';
import { UNREAD_BODY_DRAIN } from '@modelgate/http';
import { uploadDeclaredBody, uploadEndlessBody } from '@modelgate/testing/uploads';
import { Agent, request as httpRequest } from 'undici';
import { startEdge, type RunningEdge } from './support/edge';
import { freePort, startStandIn, startUnacceptingPort, type StandInService } from './support/stand-in-service';

const client = new Agent();
afterAll(() => client.close());

const GEMINI_PATHS = ['/v1beta/models/gemini-2.5-flash:generateContent', '/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse'];

/** The error body each dialect must produce for a given status/code (docs/api.md 1.1 and 1.3). */
function expectDialect(path: string, body: unknown, status: number, code: string, grpc: string, requestId: string) {
  if (path.startsWith('/v1/messages')) {
    expect(body).toEqual({ type: 'error', error: { type: status === 413 ? 'request_too_large' : 'api_error', message: expect.any(String) } });
  } else if (!path.startsWith('/v1')) {
    // /api, and the console's pages
    expect(body).toEqual({ success: false, message: expect.any(String), code });
  } else if (path.startsWith('/v1beta') || /^\/v1\/models\/[^/]+:(streamG|g)enerateContent/.test(path)) {
    expect(body).toEqual({ error: { code: status, message: expect.any(String), status: grpc } });
  } else {
    expect(body).toEqual({
      error: {
        message: expect.stringMatching(new RegExp(` \\(request id: ${requestId}\\)$`)),
        type: expect.any(String),
        param: null,
        code,
      },
    });
  }
}

describe('a stopped service', () => {
  let edge: RunningEdge;
  beforeAll(async () => {
    const relay = await startStandIn();
    await relay.stop();
    edge = await startEdge({
      RELAY_URL: relay.url,
      ACCOUNT_URL: `http://127.0.0.1:${await freePort()}`,
      CONSOLE_URL: `http://127.0.0.1:${await freePort()}`,
    });
  });
  afterAll(() => edge.stop());

  it.each(['/v1/completions', ...GEMINI_PATHS, '/v1/messages?beta=true', '/api/user/self', '/keys'])('%s: 502 JSON in the dialect, quickly', async (path) => {
    const started = Date.now();
    const res = await httpRequest(`${edge.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"gpt-4o-mini","prompt":"hi"}',
      dispatcher: client,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.statusCode).toBe(502);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const requestId = res.headers['x-request-id'] as string;
    expect(requestId).toBeTruthy();
    const body = await res.body.json();
    expectDialect(path, body, 502, 'bad_gateway', 'UNAVAILABLE', requestId);
    if (path === '/v1/completions') {
      expect(body).toEqual({
        error: { message: `service unavailable (request id: ${requestId})`, type: 'upstream_error', param: null, code: 'bad_gateway' },
      });
    }
  });
});

describe('a service that comes back', () => {
  it('is proxied again without restarting the edge', async () => {
    const port = await freePort();
    const edge = await startEdge({ RELAY_URL: `http://127.0.0.1:${port}`, ACCOUNT_URL: `http://127.0.0.1:${port}` });
    try {
      const down = await httpRequest(`${edge.url}/v1/models`, { dispatcher: client });
      await down.body.dump();
      expect(down.statusCode).toBe(502);
      const relay = await startStandIn(port);
      try {
        const up = await httpRequest(`${edge.url}/v1/models`, { dispatcher: client });
        expect(up.statusCode).toBe(200);
        expect(await up.body.json()).toMatchObject({ url: '/v1/models' });
      } finally {
        await relay.stop();
      }
    } finally {
      await edge.stop();
    }
  });
});

describe('a service host that does not accept connections', () => {
  it('gets 504 after the connect timeout, not a hang', async () => {
    const dark = await startUnacceptingPort();
    const target = `http://127.0.0.1:${dark.port}`;
    const edge = await startEdge({ RELAY_URL: target, ACCOUNT_URL: target, EDGE_UPSTREAM_CONNECT_TIMEOUT_MS: '400' });
    try {
      const started = Date.now();
      const res = await httpRequest(`${edge.url}/api/status`, { dispatcher: client });
      const elapsed = Date.now() - started;
      expect(res.statusCode).toBe(504);
      expect(await res.body.json()).toEqual({ success: false, message: 'service timed out', code: 'gateway_timeout' });
      expect(elapsed).toBeGreaterThanOrEqual(350);
      expect(elapsed).toBeLessThan(5000);
    } finally {
      await edge.stop();
      dark.stop();
    }
  });
});

describe('a service that stops answering', () => {
  let relay: StandInService;
  let edge: RunningEdge;
  beforeAll(async () => {
    relay = await startStandIn();
    relay.rawRoute('/v1/completions', () => {
      // accepts the request, never answers
    });
    relay.rawRoute('/v1beta/models/gemini-2.5-flash:generateContent', () => {});
    relay.rawRoute('/v1/messages', () => {});
    relay.rawRoute('/v1/stalls-mid-stream', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
    });
    edge = await startEdge({ RELAY_URL: relay.url, ACCOUNT_URL: relay.url, EDGE_UPSTREAM_IDLE_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await edge.stop();
    await relay.stop();
  });

  it.each(['/v1/completions', '/v1beta/models/gemini-2.5-flash:generateContent', '/v1/messages?beta=true'])('%s: 504 in the dialect after the idle timeout', async (path) => {
    const started = Date.now();
    const res = await httpRequest(`${edge.url}${path}`, { method: 'POST', body: '{}', dispatcher: client });
    const elapsed = Date.now() - started;
    expect(res.statusCode).toBe(504);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(5000);
    expectDialect(path, await res.body.json(), 504, 'gateway_timeout', 'DEADLINE_EXCEEDED', res.headers['x-request-id'] as string);
  });

  it('cuts a stream that stalls after its first event instead of hanging', async () => {
    const res = await httpRequest(`${edge.url}/v1/stalls-mid-stream`, { dispatcher: client });
    expect(res.statusCode).toBe(200);
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of res.body) received.push(chunk.toString());
      })(),
    ).rejects.toThrow();
    expect(received.join('')).toBe('data: {"n":1}\n\n');
  });
});

describe('request body limit', () => {
  let relay: StandInService;
  let edge: RunningEdge;
  const limitBytes = 1024 * 1024;
  beforeAll(async () => {
    relay = await startStandIn();
    edge = await startEdge({ RELAY_URL: relay.url, ACCOUNT_URL: relay.url, MAX_REQUEST_BODY_MB: '1' });
  });
  afterAll(async () => {
    await edge.stop();
    await relay.stop();
  });
  beforeEach(() => {
    relay.received.length = 0;
  });

  /** Sends headers (and optionally a body stream) with node:http and resolves on the response. */
  function send(path: string, headers: Record<string, string>, writeBody: (req: http.ClientRequest) => void) {
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: unknown }>((resolve, reject) => {
      const req = http.request(`${edge.url}${path}`, { method: 'POST', headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString()) }));
        res.on('error', reject);
      });
      req.on('error', () => {
        // The edge stops reading an oversized body; write errors after its answer are expected.
      });
      writeBody(req);
    });
  }

  const DIALECT_PATHS = ['/v1/completions', '/v1beta/models/gemini-2.5-flash:generateContent', '/v1/messages?beta=true', '/api/user/self'];

  it.each(['/v1/completions', '/v1beta/models/gemini-2.5-flash:generateContent', '/v1/models/gemini-2.5-flash:generateContent', '/v1/messages', '/api/user/self'])(
    '%s: a Content-Length over the limit gets 413 in the dialect before any byte is read',
    async (path) => {
      const res = await send(path, { 'Content-Length': String(limitBytes + 1), 'Content-Type': 'application/json' }, (req) => {
        req.write('{"model":');
        // the rest of the body is never sent: the edge must answer from the headers alone
      });
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('close');
      expectDialect(path, res.body, 413, 'request_too_large', 'INVALID_ARGUMENT', res.headers['x-request-id'] as string);
      expect(relay.received).toHaveLength(0);
    },
  );

  it('OpenAI 413 body is exactly the shape of docs/api.md 1.3', async () => {
    const res = await send('/v1/completions', { 'Content-Length': String(50 * 1024 * 1024) }, (req) => req.flushHeaders());
    const id = res.headers['x-request-id'];
    expect(res.body).toEqual({
      error: {
        message: `request body exceeds 1 MB (request id: ${id})`,
        type: 'invalid_request_error',
        param: null,
        code: 'request_too_large',
      },
    });
  });

  it.each([
    ['with a Content-Length', (body: Buffer) => body],
    [
      'chunked',
      (body: Buffer) =>
        Readable.from(
          (function* () {
            for (let i = 0; i < body.length; i += 64 * 1024) yield body.subarray(i, i + 64 * 1024);
          })(),
        ),
    ],
  ])('a client uploading 5 MB %s reads the 413 answer, not a broken connection', async (_kind, asBody) => {
    const res = await httpRequest(`${edge.url}/v1/completions`, {
      method: 'POST',
      body: asBody(Buffer.alloc(5 * limitBytes, 'a')),
      dispatcher: client,
    });
    expect(res.statusCode).toBe(413);
    expect(await res.body.json()).toMatchObject({ error: { code: 'request_too_large' } });
  });

  it.each(DIALECT_PATHS.flatMap((path) => [[path, 'fast', 25] as const, [path, 'slow', 3] as const]))(
    '%s: a node:http client uploading 8 MB (%s, %i times) reads the 413 in the dialect, never a broken pipe',
    async (path, pace, repetitions) => {
      for (let i = 0; i < repetitions; i++) {
        const outcome = await uploadDeclaredBody(`${edge.url}${path}`, 8 * limitBytes, pace);
        expect(outcome.error).toBeUndefined();
        expect(outcome.status).toBe(413);
        expect(outcome.headers?.connection).toBe('close');
        expectDialect(path, outcome.body, 413, 'request_too_large', 'INVALID_ARGUMENT', outcome.headers?.['x-request-id'] as string);
      }
      expect(relay.received).toHaveLength(0);
    },
  );

  it.each([
    ['with a Content-Length', 1e12],
    ['chunked', undefined],
  ])('an endless body %s gets its 413, then is cut off after the drain bound', async (_kind, declaredBytes) => {
    const started = Date.now();
    const outcome = await uploadEndlessBody(`${edge.url}/v1/completions`, declaredBytes);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.answer).toContain('"code":"request_too_large"');
    // Read on after the answer (the client could have finished), then cut at the bound.
    expect(outcome.bytesSent).toBeGreaterThan(UNREAD_BODY_DRAIN.maxBytes);
    expect(outcome.bytesSent).toBeLessThan(limitBytes + UNREAD_BODY_DRAIN.maxBytes + 16 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(UNREAD_BODY_DRAIN.maxMs);
  });

  it('a body of exactly the limit passes', async () => {
    const res = await httpRequest(`${edge.url}/v1/completions`, {
      method: 'POST',
      body: Buffer.alloc(limitBytes, 'a'),
      dispatcher: client,
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ bodyBytes: limitBytes });
  });

  it('a chunked body that grows past the limit gets 413 and the service request is aborted', async () => {
    let upstreamAborted: () => void;
    const aborted = new Promise<void>((resolve) => {
      upstreamAborted = resolve;
    });
    let upstreamBytes = 0;
    relay.rawRoute('/v1/audio/transcriptions', (req) => {
      req.on('data', (chunk: Buffer) => {
        upstreamBytes += chunk.length;
      });
      req.on('close', () => {
        if (!req.complete) upstreamAborted();
      });
    });

    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    const res = await send('/v1/audio/transcriptions', { 'Transfer-Encoding': 'chunked' }, (req) => {
      const pump = () => {
        // Keep sending (up to 4x the limit) until the edge answers.
        while (sent < 4 * limitBytes && !req.destroyed) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });

    expect(res.status).toBe(413);
    expectDialect('/v1/audio/transcriptions', res.body, 413, 'request_too_large', 'INVALID_ARGUMENT', res.headers['x-request-id'] as string);
    await aborted;
    expect(upstreamBytes).toBeLessThanOrEqual(limitBytes);
  });
});

describe('a request line or headers over the size Node accepts', () => {
  let edge: RunningEdge;
  beforeAll(async () => {
    const relay = await startStandIn();
    edge = await startEdge({ RELAY_URL: relay.url, ACCOUNT_URL: relay.url });
    await relay.stop();
  });
  afterAll(() => edge.stop());

  it.each(['/v1/completions', '/v1beta/models/gemini-2.5-flash:generateContent', '/v1/messages', '/api/user/self'])(
    '%s: a 20 KB URL gets 431 with JSON in the dialect and Connection: close',
    async (path) => {
      const res = await httpRequest(`${edge.url}${path}?q=${'a'.repeat(20 * 1024)}`, { dispatcher: client });
      expect(res.statusCode).toBe(431);
      expect(res.headers.connection).toBe('close');
      const body = (await res.body.json()) as Record<string, unknown>;
      if (path.startsWith('/v1beta')) {
        expect(body).toEqual({ error: { code: 431, message: expect.any(String), status: 'INVALID_ARGUMENT' } });
      } else if (path.startsWith('/v1/messages')) {
        expect(body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } });
      } else {
        expect(body).toMatchObject(path.startsWith('/api') ? { success: false, code: 'request_header_too_large' } : { error: { code: 'request_header_too_large' } });
      }
    },
  );

  it('a 20 KB cookie gets the same', async () => {
    const res = await httpRequest(`${edge.url}/api/user/self`, { headers: { cookie: `session=${'b'.repeat(20 * 1024)}` }, dispatcher: client });
    expect(res.statusCode).toBe(431);
    expect(await res.body.json()).toEqual({ success: false, message: 'request line and headers are too large', code: 'request_header_too_large' });
  });
});
