// OpenTelemetry in the account service: a server span per request, continuing the edge's traceparent,
// and the jobs a request queues carrying its context on to the worker's spans.
import { REQUEST_ID_ATTRIBUTE } from '@modelgate/telemetry';
import { setOption, testRedisUrl } from '@modelgate/testing';
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import { retryOnPortClash, startWorkerProcess, waitFor } from '@modelgate/testing/processes';
import { recordSpans, type RecordedSpans, startOtlpReceiver } from '@modelgate/testing/spans';
import request from 'supertest';
import { createTestAccount, type TestAccount } from './support/app';
import { postStripeWebhook } from './support/stripe';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

let recorded: RecordedSpans;
let account: TestAccount;
// Before the app is built: it installs the span middleware only when tracing is on.
beforeAll(async () => {
  recorded = await recordSpans('account');
  account = createTestAccount();
});
afterAll(async () => {
  await account.close();
  await recorded.stop();
});

it('records a server span per request in the caller’s trace, with the request id', async () => {
  await account.reset();
  const res = await request(account.app).get('/api/status').set('traceparent', `00-${TRACE}-00f067aa0ba902b7-01`).set('X-Request-Id', 'account-trace-1');
  expect(res.status).toBe(200);
  const [span] = recorded.spans();
  expect(span?.spanContext().traceId).toBe(TRACE);
  expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  expect(span?.attributes).toMatchObject({ [REQUEST_ID_ATTRIBUTE]: 'account-trace-1', 'url.path': '/api/status', 'http.response.status_code': 200, 'http.request.method': 'GET' });
});

describe('queue jobs carry the request’s trace', () => {
  const SECRET = 'whsec_tracing_test';
  const CALLER_SPAN = '00f067aa0ba902b7';

  /** The account's server span of the one request answered since the last clear. */
  function serverSpan() {
    const [span] = recorded.spans().filter((s) => s.attributes['http.request.method'] === 'POST');
    if (!span) throw new Error('no server span was recorded');
    return span;
  }

  it('a mail queued deep in a request’s services continues the request’s span (its active context)', async () => {
    await account.reset();
    recorded.clear();
    const res = await request(account.app).post('/api/verification').set('traceparent', `00-${TRACE}-${CALLER_SPAN}-01`).send({ email: 'traced@example.com' });
    expect(res.status).toBe(200);
    const [job] = await account.deps.mailQueue.getJobs(['waiting', 'delayed', 'active']);
    expect(job?.data.to).toBe('traced@example.com');
    expect(job?.data.trace).toEqual({ traceparent: `00-${TRACE}-${serverSpan().spanContext().spanId}-01` });
  });

  it('a Stripe webhook’s job is processed by the worker in a span of the caller’s trace, a child of the account’s span', async () => {
    await account.reset();
    recorded.clear();
    await setOption(account.prisma, 'StripeWebhookSecret', SECRET);
    const receiver = await startOtlpReceiver();
    const worker = await retryOnPortClash(() => startWorkerProcess(testRedisUrl(), { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
    try {
      const event = checkoutEvent({ type: 'checkout.session.expired' });
      const res = await postStripeWebhook(account.app, event.payload, SECRET).set('traceparent', `00-${TRACE}-${CALLER_SPAN}-01`);
      expect(res.status).toBe(200);
      const accountSpan = serverSpan();
      expect(accountSpan.spanContext().traceId).toBe(TRACE);
      await waitFor(async () => (await account.deps.paymentQueue.getJob(event.id))?.finishedOn, 'the worker to process the event');
      // A graceful stop flushes the worker's spans.
      worker.kill('SIGTERM');
      expect((await worker.exit).code).toBe(0);
      const jobSpans = receiver.spans.filter((span) => span.service === 'worker' && span.name === 'payment-webhooks process');
      expect(jobSpans).toHaveLength(1);
      expect(jobSpans[0]).toMatchObject({ traceId: TRACE, parentSpanId: accountSpan.spanContext().spanId, attributes: { 'messaging.message.id': event.id } });
    } finally {
      worker.kill('SIGKILL');
      await receiver.close();
    }
  });
});
