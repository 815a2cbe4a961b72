// OpenTelemetry at the edge: a server span per proxied request whose traceparent the service
// receives (continuing the client's trace when it sent one); with tracing off, headers pass untouched.
import { REQUEST_ID_ATTRIBUTE } from '@modelgate/telemetry';
import { recordSpans, type ReadableSpan, type RecordedSpans } from '@modelgate/testing/spans';
import { request as httpRequest } from 'undici';
import { useEdgeBetweenStandIns } from './support/edge';

const stack = useEdgeBetweenStandIns();
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-00f067aa0ba902b7-01`;

beforeEach(() => {
  stack.relay.received.length = 0;
});

async function post(path: string, headers: Record<string, string>): Promise<number> {
  const res = await httpRequest(`${stack.edge.url}${path}`, { method: 'POST', body: '{}', headers, dispatcher: stack.client });
  await res.body.text();
  return res.statusCode;
}

/** The edge's span of the request, once the answer has ended. */
async function edgeSpan(recorded: RecordedSpans): Promise<ReadableSpan> {
  for (let tries = 0; tries < 100; tries++) {
    const span = recorded.spans()[0];
    if (span) return span;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the edge recorded no span');
}

describe('tracing on', () => {
  let recorded: RecordedSpans;
  beforeAll(async () => {
    recorded = await recordSpans('edge');
  });
  afterAll(() => recorded.stop());
  beforeEach(() => recorded.clear());

  it('continues the client’s trace and hands the service its own span as the parent', async () => {
    expect(await post('/v1/chat/completions?key=secret', { traceparent: CLIENT_TRACEPARENT, 'x-request-id': 'edge-trace-1' })).toBe(200);
    const span = await edgeSpan(recorded);
    expect(span.spanContext().traceId).toBe(CLIENT_TRACE);
    expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(span.attributes).toMatchObject({ [REQUEST_ID_ATTRIBUTE]: 'edge-trace-1', 'url.path': '/v1/chat/completions', 'http.response.status_code': 200 });
    expect(stack.relay.received[0]?.headers.traceparent).toBe(`00-${CLIENT_TRACE}-${span.spanContext().spanId}-01`);
  });

  it('starts a trace for a client that sent none', async () => {
    expect(await post('/v1/embeddings', {})).toBe(200);
    const span = await edgeSpan(recorded);
    expect(span.parentSpanContext).toBeUndefined();
    expect(stack.relay.received[0]?.headers.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
  });
});

describe('tracing off', () => {
  it('adds no traceparent and leaves a client’s as it is', async () => {
    await post('/v1/embeddings', {});
    await post('/v1/embeddings', { traceparent: CLIENT_TRACEPARENT });
    expect(stack.relay.received.map((r) => r.headers.traceparent)).toEqual([undefined, CLIENT_TRACEPARENT]);
  });
});
