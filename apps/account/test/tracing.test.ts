// OpenTelemetry in the account service: a server span per request, continuing the edge's traceparent.
import { REQUEST_ID_ATTRIBUTE } from '@modelgate/telemetry';
import { recordSpans, type RecordedSpans } from '@modelgate/testing/spans';
import request from 'supertest';
import { createTestAccount, type TestAccount } from './support/app';

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
