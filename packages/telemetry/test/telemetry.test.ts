import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { activeTraceContext, contextFromHeaders, injectTraceHeaders, REQUEST_ID_ATTRIBUTE, startServerSpan, startSpan, startTracing, traceHeadersOf, traceJobs, tracingEnabled } from '../src';

const INCOMING_TRACE = '0af7651916cd43dd8448eb211c80319c';
const INCOMING = `00-${INCOMING_TRACE}-b7ad6b7169203331-01`;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function get(port: number, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/v1/x?key=secret', headers }, (res) => res.resume().on('end', resolve)).on('error', reject).end();
  });
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => resolve(text));
  });
}

describe('telemetry', () => {
  it('registers nothing and records nothing without an endpoint', async () => {
    const stop = await startTracing({ serviceName: 'test', endpoint: undefined });
    expect(tracingEnabled()).toBe(false);
    const processor = async () => 1;
    expect(traceJobs('q', processor)).toBe(processor);
    // A job queued now carries nothing, whatever context its producer has.
    expect(traceHeadersOf(contextFromHeaders({ traceparent: INCOMING }))).toBeUndefined();
    expect(activeTraceContext()).toBeUndefined();
    await stop();
  });

  it('carries a span’s context in a job, which the job’s span continues; a job without one starts a trace', async () => {
    const exporter = new InMemorySpanExporter();
    const stop = await startTracing({ serviceName: 'test', endpoint: undefined, exporter });
    try {
      const producer = startSpan(contextFromHeaders({ traceparent: INCOMING, tracestate: 'vendor=x' }), 'webhook');
      const carried = traceHeadersOf(trace.setSpan(ROOT_CONTEXT, producer));
      expect(carried).toEqual({ traceparent: `00-${INCOMING_TRACE}-${producer.spanContext().spanId}-01`, tracestate: 'vendor=x' });
      expect(traceHeadersOf(ROOT_CONTEXT)).toBeUndefined();
      expect(traceHeadersOf(undefined)).toBeUndefined();

      const job = traceJobs('mail', async (_job: { id: string; name: string; attemptsMade: number; data: { trace?: { traceparent: string } } }) => 'sent');
      await job({ id: '1', name: 'mail', attemptsMade: 0, data: { trace: carried } });
      await job({ id: '2', name: 'mail', attemptsMade: 0, data: {} });
      // A malformed traceparent is ignored: the job still runs, in a trace of its own.
      await job({ id: '3', name: 'mail', attemptsMade: 0, data: { trace: { traceparent: 'garbage' } } });
      const [child, own, malformed] = exporter.getFinishedSpans();
      expect(child?.spanContext().traceId).toBe(INCOMING_TRACE);
      expect(child?.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
      for (const span of [own, malformed]) {
        expect(span?.spanContext().traceId).not.toBe(INCOMING_TRACE);
        expect(span?.parentSpanContext).toBeUndefined();
      }
    } finally {
      await stop();
    }
  });

  it('continues an incoming traceparent in the server span and its children', async () => {
    const exporter = new InMemorySpanExporter();
    const stop = await startTracing({ serviceName: 'test', endpoint: undefined, exporter });
    const server = createServer((req, res) => {
      const serverSpan = startServerSpan(req, res, 'req-1');
      const child = startSpan(trace.setSpan(ROOT_CONTEXT, serverSpan), 'routing', { [REQUEST_ID_ATTRIBUTE]: 'req-1' });
      const headers: Record<string, string> = {};
      injectTraceHeaders(child, headers);
      child.end();
      res.end(headers.traceparent);
    });
    try {
      const port = await listen(server);
      await get(port, { traceparent: INCOMING });
      await new Promise((resolve) => setImmediate(resolve));
      const spans = exporter.getFinishedSpans();
      const serverSpan = spans.find((span) => span.name === 'GET')!;
      const routing = spans.find((span) => span.name === 'routing')!;
      expect(serverSpan.spanContext().traceId).toBe(INCOMING_TRACE);
      expect(serverSpan.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
      expect(serverSpan.attributes).toMatchObject({ 'url.path': '/v1/x', 'http.response.status_code': 200, [REQUEST_ID_ATTRIBUTE]: 'req-1' });
      expect(routing.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
      expect(routing.spanContext().traceId).toBe(INCOMING_TRACE);
    } finally {
      server.close();
      await stop();
    }
    expect(tracingEnabled()).toBe(false);
  });

  it('exports over OTLP/HTTP JSON to {endpoint}/v1/traces, flushed at stop', async () => {
    const received: { path: string | undefined; type: string | undefined; body: string }[] = [];
    const receiver = createServer((req, res) => {
      void readAll(req).then((body) => {
        received.push({ path: req.url, type: req.headers['content-type'], body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const port = await listen(receiver);
    try {
      const stop = await startTracing({ serviceName: 'otlp-test', endpoint: `http://127.0.0.1:${port}/` });
      expect(tracingEnabled()).toBe(true);
      const job = traceJobs('payments', async (_job: { id: string; name: string; attemptsMade: number; data: object }) => 'done');
      await expect(job({ id: '7', name: 'checkout', attemptsMade: 0, data: {} })).resolves.toBe('done');
      await stop();
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ path: '/v1/traces', type: 'application/json' });
      const body = received[0]!.body;
      expect(body).toContain('"payments process"');
      expect(body).toContain('"otlp-test"');
    } finally {
      receiver.close();
    }
  });
});
