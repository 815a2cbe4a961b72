// The account service's /metrics after some traffic: requests by route and status, and
// payment webhook deliveries by outcome.
import { metricValue } from '@modelgate/http';
import { setOption } from '@modelgate/testing';
import { checkoutEvent, signStripePayload } from '@modelgate/testing/fake-stripe';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { loggedInUser } from './support/users';

const SECRET = 'whsec_metrics_webhook_secret';
const account = createTestAccount();
const { app, prisma } = account;

afterAll(() => account.close());

function deliverWebhook(payload: string, signature: string) {
  return request(app).post('/api/stripe/webhook').set('Content-Type', 'application/json').set('Stripe-Signature', signature).send(payload);
}

it('counts requests by route and status, and webhook deliveries by outcome', async () => {
  await account.reset();
  const event = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_metrics', paymentStatus: 'paid' });

  // Before a webhook secret is configured: 503, Stripe delivers again later.
  expect((await deliverWebhook(event.payload, signStripePayload(event.payload, SECRET))).status).toBe(503);
  await setOption(prisma, 'StripeWebhookSecret', SECRET);
  expect((await deliverWebhook(event.payload, signStripePayload(event.payload, SECRET))).status).toBe(200);
  expect((await deliverWebhook(event.payload, signStripePayload(event.payload, SECRET))).status).toBe(200);
  expect((await deliverWebhook(event.payload, signStripePayload(event.payload, 'whsec_someone_else'))).status).toBe(400);
  expect((await request(app).post('/api/stripe/webhook').set('Content-Type', 'application/json').send(event.payload)).status).toBe(400);

  const user = await loggedInUser(account);
  expect((await user.agent.get('/api/user/self')).status).toBe(200);
  expect((await user.agent.get(`/api/user/${user.id + 1000}`)).status).toBe(403);
  expect((await request(app).post('/api/user/login').send({ username: user.username, password: 'not-the-password' })).status).toBe(401);
  expect((await request(app).get('/api/no/such/route')).status).toBe(404);

  const res = await request(app).get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  const text = res.text;

  const webhooks = (outcome: string) => metricValue(text, 'account_webhook_events_received_total', { service: 'account', provider: 'stripe', outcome });
  expect(['stored', 'duplicate', 'rejected', 'unavailable'].map(webhooks)).toEqual([1, 1, 2, 1]);

  const requests = (method: string, route: string, status: number) =>
    metricValue(text, 'http_request_duration_seconds_count', { service: 'account', method, route, status });
  expect(requests('POST', '/api/stripe/webhook', 200)).toBe(2);
  expect(requests('POST', '/api/stripe/webhook', 400)).toBe(2);
  expect(requests('POST', '/api/stripe/webhook', 503)).toBe(1);
  expect(requests('POST', '/api/user/login', 200)).toBe(1);
  expect(requests('POST', '/api/user/login', 401)).toBe(1);
  expect(requests('GET', '/api/user/self', 200)).toBe(1);
  // Ids never become labels: the route pattern does.
  expect(requests('GET', '/api/user/:id', 403)).toBe(1);
  expect(requests('GET', 'unmatched', 404)).toBe(1);
  expect(metricValue(text, 'http_request_duration_seconds_bucket', { route: '/api/user/self', status: 200, le: '+Inf' })).toBe(1);
  expect(text).toMatch(/^process_resident_memory_bytes\{service="account"\} \d+/m);
});
