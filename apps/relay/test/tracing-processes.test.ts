// Tracing end to end: the real edge and relay processes, exporting over OTLP/HTTP to a loopback
// receiver (OTEL_EXPORTER_OTLP_ENDPOINT). One call through the edge is one trace: the client's, the
// edge's span, the relay's below it, the call's spans, and the provider's request in it too.
import { join } from 'node:path';
import { createTestPrisma, createTestRedis, deleteKeysWithPrefix, redisPrefix, resetDatabase } from '@modelgate/testing';
import { startFakeUpstream, type FakeUpstream } from '@modelgate/testing/fake-upstream';
import { freePorts, startRelayProcess, startServiceProcess, type ServiceProcess } from '@modelgate/testing/processes';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '@modelgate/testing/spans';
import { createCustomer, MODEL, openAiChannel, setUnitPrices } from './harness';

jest.setTimeout(90_000);

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const prisma = createTestPrisma();
let receiver: OtlpReceiver;
let upstream: FakeUpstream;
let relay: ServiceProcess & { url: string };
let edge: ServiceProcess;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  upstream = await startFakeUpstream();
  // Before the relay starts: it loads prices and channels at boot (and only this file's).
  await resetDatabase(prisma);
  // Ids start again with the database: balance mirrors and limits left by earlier files would be theirs.
  const redis = createTestRedis();
  for (const name of ['bal:', 'ledger:', 'lim:']) await deleteKeysWithPrefix(redis, `${redisPrefix()}${name}`);
  await redis.quit();
  await setUnitPrices(prisma);
  await openAiChannel(prisma, upstream.url);
  relay = await startRelayProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  const [edgePort, metricsPort] = await freePorts(2);
  edge = await startServiceProcess({
    entry: join(__dirname, '../../edge/src/index.ts'),
    readyUrl: `http://127.0.0.1:${edgePort}/readyz`,
    env: { EDGE_PORT: String(edgePort), EDGE_METRICS_PORT: String(metricsPort), RELAY_URL: relay.url, LOG_LEVEL: 'warn', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
});

afterAll(async () => {
  for (const service of [edge, relay]) service?.kill('SIGKILL');
  await upstream?.close();
  await receiver?.close();
  await prisma.$disconnect();
});

/** Stops a service the graceful way, which flushes its spans. */
async function stop(service: ServiceProcess): Promise<void> {
  service.kill('SIGTERM');
  const { code } = await service.exit;
  expect(code).toBe(0);
}

function one(spans: ReceivedSpan[], service: string, name: string): ReceivedSpan {
  const matching = spans.filter((span) => span.service === service && span.name === name);
  if (matching.length !== 1) throw new Error(`${matching.length} ${service} ${name} spans among ${JSON.stringify(spans.map((s) => [s.service, s.name]))}`);
  return matching[0]!;
}

it('one call through edge and relay is one trace, down to the provider', async () => {
  const customer = await createCustomer(prisma);
  const res = await fetch(`${new URL(edge.readyUrl).origin}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json', 'x-request-id': 'e2e-trace-1', traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    body: JSON.stringify({ model: MODEL, prompt: 'hello there' }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  await stop(edge);
  await stop(relay);

  const spans = receiver.spans;
  const edgeSpan = one(spans, 'edge', 'POST');
  const relaySpan = one(spans, 'relay', 'POST');
  expect(edgeSpan).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, attributes: { 'modelgate.request_id': 'e2e-trace-1' } });
  expect(relaySpan).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: edgeSpan.spanId, attributes: { 'modelgate.request_id': 'e2e-trace-1', 'http.response.status_code': 200 } });
  for (const name of ['routing', 'reservation', 'upstream', 'settlement']) {
    expect(one(spans, 'relay', name)).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: relaySpan.spanId, attributes: { 'modelgate.request_id': 'e2e-trace-1' } });
  }
  const attempt = one(spans, 'relay', 'upstream');
  expect(upstream.requests[0]?.headers.traceparent).toBe(`00-${CLIENT_TRACE}-${attempt.spanId}-01`);
});
