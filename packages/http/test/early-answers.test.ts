import http, { type IncomingHttpHeaders, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { renderError, requestTooLarge } from '@modelgate/errors';
import express from 'express';
import { answerBeforeBody, listen } from '../src';

let server: Server;
let port: number;

beforeAll(async () => {
  const app = express();
  app.post('/drain-quickly', (req, res) => {
    answerBeforeBody(req, res, renderError(requestTooLarge(1), 'openai', 'rid'), { maxBytes: 1 << 30, maxMs: 300 });
  });
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  server = await listen(app, 0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Answer {
  status?: number;
  headers?: IncomingHttpHeaders;
  body?: unknown;
  error?: string;
}

/** A node:http request on a fresh connection; what the client saw, errors included. */
function send(method: string, path: string, body?: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const answer: Answer = {};
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        Object.assign(answer, { status: res.statusCode, headers: res.headers, body: text === '' ? text : JSON.parse(text) });
      });
      res.on('error', (err: NodeJS.ErrnoException) => {
        answer.error ??= err.code;
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      answer.error ??= err.code;
    });
    req.on('close', () => setImmediate(() => resolve(answer)));
    req.end(body);
  });
}

/** Raw bytes on a fresh connection; everything the server sent until it closed. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      received += text;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

const LONG = 'a'.repeat(20 * 1024);

describe('requests Node refuses before the app sees them', () => {
  it.each([
    ['/v1/completions', (id: string) => ({ error: { message: `request line and headers are too large (request id: ${id})`, type: 'invalid_request_error', param: null, code: 'request_header_too_large' } })],
    ['/v1beta/models/gemini-2.5-flash:generateContent', () => ({ error: { code: 431, message: 'request line and headers are too large', status: 'INVALID_ARGUMENT' } })],
    ['/v1/messages', () => ({ type: 'error', error: { type: 'invalid_request_error', message: 'request line and headers are too large' } })],
    ['/api/user/self', () => ({ success: false, message: 'request line and headers are too large', code: 'request_header_too_large' })],
  ])('a 20 KB URL under %s gets 431 with a JSON body in the dialect, every time', async (path, expected) => {
    for (let i = 0; i < 20; i++) {
      const answer = await send('GET', `${path}?q=${LONG}`);
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(431);
      expect(answer.headers).toMatchObject({ connection: 'close', 'content-type': 'application/json; charset=utf-8' });
      const id = answer.headers?.['x-request-id'] as string;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.body).toEqual(expected(id));
    }
  });

  it('oversized headers followed by a 4 MB body still reach the client as a 431, not a reset', async () => {
    for (let i = 0; i < 10; i++) {
      const answer = await send('POST', `/v1/completions?q=${LONG}`, Buffer.alloc(4 * 1024 * 1024, 'a'));
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(431);
      expect(answer.body).toMatchObject({ error: { code: 'request_header_too_large' } });
    }
  });

  it('answers malformed HTTP with 400 in the dialect and keeps serving', async () => {
    const raw = await sendRaw('GET /v1beta/models HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(raw).toMatch(/\r\nConnection: close\r\n/);
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe(JSON.stringify({ error: { code: 400, message: 'malformed HTTP request', status: 'INVALID_ARGUMENT' } }));
    expect((await send('GET', '/v1/models')).body).toEqual({ ok: true });
  });
});

describe('an answer before the body', () => {
  it('closes the connection after the time bound when the body crawls on', async () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setEncoding('latin1');
    let received = '';
    socket.on('data', (text: string) => {
      received += text;
    });
    const started = Date.now();
    socket.write('POST /drain-quickly HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    const drip = setInterval(() => socket.writable && socket.write('a'), 20);
    const closedAfter = await new Promise<number>((resolve) => {
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Date.now() - started));
    });
    clearInterval(drip);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(closedAfter).toBeGreaterThanOrEqual(250);
    expect(closedAfter).toBeLessThan(3000);
  });
});
