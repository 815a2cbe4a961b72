import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { request as httpRequest } from 'undici';
import { useEdgeBetweenStandIns } from './support/edge';
import { sha256 } from './support/stand-in-service';

const stack = useEdgeBetweenStandIns();

describe('server-sent events', () => {
  it.each([
    ['/v1/completions', 'data: {"choices":[{"text":"Hel"}]}\n\n', 'data: {"choices":[{"text":"lo"}]}\n\ndata: [DONE]\n\n'],
    [
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      'data: {"candidates":[{"content":{"parts":[{"text":"Hel"}]}}]}\r\n\r\n',
      'data: {"candidates":[{"content":{"parts":[{"text":"lo"}]}}]}\r\n\r\n',
    ],
  ])('%s: the first event reaches the client while the service is still generating', async (path, first, rest) => {
    const pauseMs = 1000;
    const [routePath = path] = path.split('?', 1);
    stack.relay.route(routePath, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
      res.write(first);
      setTimeout(() => res.end(rest), pauseMs);
    });

    const started = Date.now();
    const res = await httpRequest(`${stack.edge.url}${path}`, { method: 'POST', body: '{"stream":true}', dispatcher: stack.client });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['x-accel-buffering']).toBe('no');

    const arrivals: Array<{ at: number; text: string }> = [];
    for await (const chunk of res.body) arrivals.push({ at: Date.now() - started, text: chunk.toString() });
    const endedAt = Date.now() - started;

    expect(arrivals.map((a) => a.text).join('')).toBe(first + rest);
    expect(arrivals[0]?.text).toBe(first);
    // Generous bound: the first event must not wait for the rest of the stream.
    expect(arrivals[0]?.at).toBeLessThan(endedAt - pauseMs / 2);
  });

  it('stops the upstream stream when the client goes away', async () => {
    let upstreamClosed: () => void;
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    stack.relay.rawRoute('/v1/long-stream', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const timer = setInterval(() => res.write('data: {"tick":1}\n\n'), 20);
      res.on('close', () => {
        clearInterval(timer);
        upstreamClosed();
      });
    });
    const controller = new AbortController();
    const res = await httpRequest(`${stack.edge.url}/v1/long-stream`, { signal: controller.signal, dispatcher: stack.client });
    for await (const _chunk of res.body) {
      controller.abort();
      break;
    }
    await closed; // would time the test out if the edge kept the upstream stream open
  });
});

describe('bodies pass byte-identical', () => {
  it('a large POST body (20 MB) reaches the service unchanged, and a large response returns unchanged', async () => {
    const body = randomBytes(20 * 1024 * 1024);
    stack.relay.route('/v1/files', (_req, res, received) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(received);
    });
    const res = await httpRequest(`${stack.edge.url}/v1/files`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body,
      dispatcher: stack.client,
    });
    expect(res.statusCode).toBe(200);
    const echoed = Buffer.from(await res.body.arrayBuffer());
    const received = stack.relay.received.find((r) => r.url === '/v1/files')!;
    expect(received.headers['content-length']).toBe(String(body.length));
    expect(sha256(received.body)).toBe(sha256(body));
    expect(sha256(echoed)).toBe(sha256(body));
  });

  it('a Stripe webhook arrives raw, with its signature and content headers untouched', async () => {
    // Odd spacing, unicode and key order: any re-serialisation would change the bytes.
    const payload = Buffer.from('{"id":"evt_1",  "type":"checkout.session.completed","data":{"object":{"name":"Zoë ✓"}}}\n');
    const signature = 't=1763769600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd,v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39';
    stack.account.route('/api/stripe/webhook', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
    });
    const res = await httpRequest(`${stack.edge.url}/api/stripe/webhook`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'Stripe-Signature': signature,
        'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      },
      body: payload,
      dispatcher: stack.client,
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ received: true });

    const received = stack.account.received.find((r) => r.url === '/api/stripe/webhook')!;
    expect(received.body.equals(payload)).toBe(true);
    expect(received.headers['stripe-signature']).toBe(signature);
    expect(received.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(received.headers['content-length']).toBe(String(payload.length));
  });

  it('a chunked upload under the limit streams through', async () => {
    const parts = [randomBytes(300_000), randomBytes(500_000), randomBytes(7)];
    async function* generate() {
      for (const part of parts) yield part;
    }
    const res = await httpRequest(`${stack.edge.url}/v1/uploads`, { method: 'PUT', body: Readable.from(generate()), dispatcher: stack.client });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    const received = stack.relay.received.find((r) => r.url === '/v1/uploads')!;
    expect(received.headers['transfer-encoding']).toBe('chunked');
    expect(sha256(received.body)).toBe(sha256(Buffer.concat(parts)));
  });
});
