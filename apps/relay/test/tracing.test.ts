// OpenTelemetry tracing of relayed calls: a server span continuing the caller's traceparent, the
// call's routing, reservation, upstream and settlement spans with its request id, the traceparent
// passed on to the provider, the request's context carried by the balance warning its charge queues;
// and nothing at all when tracing is off.
import { createBalanceWarningQueue, createProducerConnection } from '@modelgate/queue';
import { REQUEST_ID_ATTRIBUTE, tracingEnabled } from '@modelgate/telemetry';
import { redisPrefix, testRedisUrl } from '@modelgate/testing';
import { recordSpans, type ReadableSpan, type RecordedSpans } from '@modelgate/testing/spans';
import { createCustomer, eventually, harness, MODEL, openAiChannel, relaySuite, resetSuite, setUnitPrices, startRelay, upstream } from './harness';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_PARENT = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

let recorded: RecordedSpans;
// Before the relay is built: it installs its server spans only when tracing is on.
beforeAll(async () => {
  recorded = await recordSpans('relay');
});
afterAll(() => recorded.stop());

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma);
  await openAiChannel(harness.prisma, upstream.url);
  await harness.reloadCaches();
  recorded.clear();
});

async function complete(url: string, key: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: MODEL, prompt: 'hello there' }),
  });
  await res.arrayBuffer();
  return res;
}

function named(spans: ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((candidate) => candidate.name === name);
  if (!span) throw new Error(`no ${name} span among ${spans.map((s) => s.name).join(', ')}`);
  return span;
}

/** The call's spans once its server span (the last to end) has ended. */
function callSpans(): Promise<ReadableSpan[]> {
  return eventually(() => {
    const spans = recorded.spans();
    named(spans, 'POST');
    named(spans, 'settlement');
    return spans;
  });
}

it('records routing, reservation, upstream and settlement under the server span, and passes the traceparent upstream', async () => {
  const customer = await createCustomer(harness.prisma);
  const res = await complete(harness.url, customer.key, { 'x-request-id': 'trace-req-1' });
  expect(res.status).toBe(200);
  const spans = await callSpans();
  const server = named(spans, 'POST');
  const traceId = server.spanContext().traceId;
  expect(server.attributes).toMatchObject({ [REQUEST_ID_ATTRIBUTE]: 'trace-req-1', 'url.path': '/v1/completions', 'http.response.status_code': 200 });
  for (const name of ['routing', 'reservation', 'upstream', 'settlement']) {
    const span = named(spans, name);
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(span.attributes[REQUEST_ID_ATTRIBUTE]).toBe('trace-req-1');
  }
  const attempt = named(spans, 'upstream');
  expect(attempt.attributes).toMatchObject({ 'modelgate.provider_type': 1, 'http.response.status_code': 200, 'modelgate.attempt': 1 });
  expect(typeof attempt.attributes['modelgate.channel_id']).toBe('number');
  // The provider saw the upstream span as its parent, in the same trace.
  const sent = TRACEPARENT.exec(String(upstream.requests[0]?.headers.traceparent));
  expect(sent?.[1]).toBe(traceId);
  expect(sent?.[2]).toBe(attempt.spanContext().spanId);
});

it('continues the caller’s trace', async () => {
  const customer = await createCustomer(harness.prisma);
  await complete(harness.url, customer.key, { traceparent: `00-${CALLER_TRACE}-${CALLER_PARENT}-01` });
  const spans = await callSpans();
  const server = named(spans, 'POST');
  expect(server.spanContext().traceId).toBe(CALLER_TRACE);
  expect(server.parentSpanContext?.spanId).toBe(CALLER_PARENT);
  expect(upstream.requests[0]?.headers.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-`));
});

it('marks an upstream failure on the attempt’s span', async () => {
  const customer = await createCustomer(harness.prisma);
  upstream.setMode('error500');
  const res = await complete(harness.url, customer.key);
  expect(res.status).toBeGreaterThanOrEqual(500);
  const spans = await eventually(() => {
    const all = recorded.spans();
    named(all, 'POST');
    return all;
  });
  const attempt = named(spans, 'upstream');
  expect(attempt.status.code).toBe(2);
  expect(attempt.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
  expect(spans.find((span) => span.name === 'settlement')).toBeUndefined();
});

it('a balance warning queued by the charge of a traced call carries the call’s context to the worker', async () => {
  const customer = await createCustomer(harness.prisma, { quota: 1_000_000 });
  await harness.prisma.user.update({ where: { id: customer.userId }, data: { notifyType: 'email', quotaWarningThreshold: 1_000_000n } });
  await harness.reloadCaches();
  const connection = createProducerConnection(testRedisUrl());
  const queue = createBalanceWarningQueue(connection, redisPrefix());
  try {
    await queue.obliterate({ force: true });
    await complete(harness.url, customer.key, { traceparent: `00-${CALLER_TRACE}-${CALLER_PARENT}-01` });
    const server = named(await callSpans(), 'POST');
    await harness.relay.ledger.flush();
    const [job] = await eventually(async () => {
      const found = await queue.getJobs(['waiting']);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(job?.data.trace).toEqual({ traceparent: `00-${CALLER_TRACE}-${server.spanContext().spanId}-01` });
  } finally {
    await queue.close();
    await connection.quit();
  }
});

it('records nothing and adds no header when tracing is off', async () => {
  await recorded.stop();
  expect(tracingEnabled()).toBe(false);
  const untraced = await startRelay();
  try {
    const customer = await createCustomer(harness.prisma);
    const res = await complete(untraced.url, customer.key, { traceparent: `00-${CALLER_TRACE}-${CALLER_PARENT}-01` });
    expect(res.status).toBe(200);
    expect(upstream.requests[0]?.headers.traceparent).toBeUndefined();
    expect(recorded.spans()).toHaveLength(0);
  } finally {
    await untraced.close();
  }
});
