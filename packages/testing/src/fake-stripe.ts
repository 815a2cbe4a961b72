// A local stand-in for the parts of Stripe that Modelgate talks to: the REST API the `stripe` SDK
// calls to create Checkout Sessions, and the webhook events Stripe sends back (signed the way
// Stripe signs them). Point the SDK at it with STRIPE_API_BASE = fake.url.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface RecordedStripeRequest {
  method: string;
  path: string;
  /** `Authorization` header as sent (the API secret in a Bearer). */
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  /** The form-encoded body, flat: `line_items[0][price]` -> `price_...`. */
  form: Record<string, string>;
}

/** The fields of Stripe's Checkout Session the fake answers with, typed by the stripe SDK itself. */
export type FakeCheckoutSession = Pick<
  Stripe.Checkout.Session,
  | 'id'
  | 'object'
  | 'url'
  | 'mode'
  | 'status'
  | 'payment_status'
  | 'client_reference_id'
  | 'customer'
  | 'customer_email'
  | 'currency'
  | 'amount_subtotal'
  | 'amount_total'
  | 'metadata'
  | 'success_url'
  | 'cancel_url'
  | 'livemode'
  | 'created'
>;

/** A Price of the fake account: what one unit costs, in the currency's minor unit. */
export type FakePrice = Pick<Stripe.Price, 'unit_amount' | 'currency'>;

export interface FakeStripeOptions {
  /** When set, requests with another `Authorization: Bearer` get Stripe's 401. */
  apiKey?: string;
  /** The account's prices by id; a session for any other price gets Stripe's 400 `resource_missing`. */
  prices?: Record<string, FakePrice>;
}

export interface FakeStripe {
  /** Base URL to use as STRIPE_API_BASE. */
  url: string;
  requests: RecordedStripeRequest[];
  /** Sessions created so far, by id. */
  sessions: Map<string, FakeCheckoutSession>;
  /** While true every API call answers 500 `api_error`, as during a Stripe outage. */
  setFailing(failing: boolean): void;
  close(): Promise<void>;
}

function stripeError(res: ServerResponse, status: number, type: string, message: string, details: { code?: string; param?: string } = {}): void {
  // `Stripe-Should-Retry: false` keeps the SDK from retrying the fake outage, so tests stay fast.
  res.writeHead(status, { 'Content-Type': 'application/json', 'Stripe-Should-Retry': 'false' });
  res.end(JSON.stringify({ error: { type, message, ...details } }));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function metadataOf(form: Record<string, string>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(form)) {
    const name = /^metadata\[(.+)\]$/.exec(key)?.[1];
    if (name !== undefined) metadata[name] = value;
  }
  return metadata;
}

type Totals = { amount: number; currency: string } | { error: string; param: string; code?: string };

/** What Stripe computes at creation: the sum of unit_amount x quantity over the line items, in their one currency. */
function totalsOf(form: Record<string, string>, prices: Record<string, FakePrice>): Totals {
  let amount = 0;
  let currency: string | undefined;
  for (let i = 0; ; i++) {
    const id = form[`line_items[${i}][price]`];
    if (id === undefined) break;
    const price = Object.hasOwn(prices, id) ? prices[id] : undefined;
    if (!price || price.unit_amount === null) return { error: `No such price: '${id}'`, param: `line_items[${i}][price]`, code: 'resource_missing' };
    if (currency !== undefined && price.currency !== currency) {
      return { error: 'All line items must use the same currency.', param: `line_items[${i}][price]` };
    }
    currency = price.currency;
    amount += price.unit_amount * Number(form[`line_items[${i}][quantity]`] ?? 1);
  }
  return currency === undefined ? { error: 'Missing required param: line_items.', param: 'line_items', code: 'parameter_missing' } : { amount, currency };
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const requests: RecordedStripeRequest[] = [];
  const sessions = new Map<string, FakeCheckoutSession>();
  const byIdempotencyKey = new Map<string, FakeCheckoutSession>();
  let failing = false;
  const prices = options.prices ?? {};

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const [path = '/'] = (req.url ?? '/').split('?', 1);
      const form = Object.fromEntries(new URLSearchParams(body));
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, idempotencyKey, form });

      if (failing) return stripeError(res, 500, 'api_error', 'An unknown error occurred (fake outage).');
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return stripeError(res, 401, 'invalid_request_error', 'Invalid API Key provided.');
      }
      if (req.method !== 'POST' || path !== '/v1/checkout/sessions') {
        return stripeError(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path}).`);
      }
      // Stripe answers a repeated idempotency key with the original result.
      const replayed = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
      if (replayed) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify(replayed));
      }
      if (!form.mode) return stripeError(res, 400, 'invalid_request_error', 'Missing required param: mode.', { code: 'parameter_missing', param: 'mode' });
      if (form.mode !== 'payment') return stripeError(res, 400, 'invalid_request_error', 'This fake creates payment sessions only.', { param: 'mode' });
      const totals = totalsOf(form, prices);
      if ('error' in totals) {
        return stripeError(res, 400, 'invalid_request_error', totals.error, { code: totals.code, param: totals.param });
      }
      const id = `cs_test_${randomBytes(12).toString('hex')}`;
      const session: FakeCheckoutSession = {
        id,
        object: 'checkout.session',
        url: `https://checkout.stripe.test/c/pay/${id}`,
        mode: 'payment',
        status: 'open',
        payment_status: 'unpaid',
        client_reference_id: form.client_reference_id ?? null,
        customer: form.customer ?? null,
        customer_email: form.customer_email ?? null,
        currency: totals.currency,
        amount_subtotal: totals.amount,
        amount_total: totals.amount,
        metadata: metadataOf(form),
        success_url: form.success_url ?? null,
        cancel_url: form.cancel_url ?? null,
        livemode: false,
        created: Math.floor(Date.now() / 1000),
      };
      sessions.set(id, session);
      if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, session);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Request-Id': `req_${randomBytes(6).toString('hex')}` });
      res.end(JSON.stringify(session));
    })().catch(() => stripeError(res, 500, 'api_error', 'fake Stripe failed'));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sessions,
    setFailing(value) {
      failing = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The fields of a Checkout Session that a payment is checked against (what the account service kept of it). */
export type CheckoutSessionRef = Pick<Stripe.Checkout.Session, 'id' | 'client_reference_id' | 'amount_total' | 'currency'>;

export interface CheckoutEventInput {
  /** `checkout.session.completed`, `...async_payment_succeeded`, `...async_payment_failed`, `...expired`, or any other. */
  type: string;
  /** The session the event reports (one the fake created, say): its id, client_reference_id, amount_total and currency, unless given below. */
  session?: CheckoutSessionRef;
  /** The top-up's trade_no, as Modelgate passed it when creating the session. */
  clientReferenceId?: string | null;
  paymentStatus?: 'paid' | 'unpaid' | 'no_payment_required';
  sessionId?: string;
  customer?: string | null;
  /** In the currency's minor unit (cents). */
  amountTotal?: number | null;
  currency?: string | null;
  eventId?: string;
}

/** A webhook event body shaped like Stripe's (`object: "event"`, the session under `data.object`). */
export function checkoutEvent(input: CheckoutEventInput): { id: string; payload: string } {
  const id = input.eventId ?? `evt_test_${randomBytes(12).toString('hex')}`;
  const defaultPaymentStatus = input.type === 'checkout.session.async_payment_succeeded' ? 'paid' : 'unpaid';
  const { session } = input;
  const event = {
    id,
    object: 'event',
    api_version: '2025-01-27.acacia',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: input.type,
    data: {
      object: {
        id: input.sessionId ?? session?.id ?? `cs_test_${randomBytes(12).toString('hex')}`,
        object: 'checkout.session',
        client_reference_id: input.clientReferenceId !== undefined ? input.clientReferenceId : (session?.client_reference_id ?? null),
        customer: input.customer ?? null,
        mode: 'payment',
        currency: input.currency !== undefined ? input.currency : (session?.currency ?? 'usd'),
        amount_total: input.amountTotal !== undefined ? input.amountTotal : (session?.amount_total ?? 100),
        payment_status: input.paymentStatus ?? defaultPaymentStatus,
        status: input.type === 'checkout.session.expired' ? 'expired' : 'complete',
      },
    },
  };
  // Pretty-printed like Stripe's own deliveries: a re-serialised body no longer matches its signature.
  return { id, payload: JSON.stringify(event, null, 2) };
}

/** The `Stripe-Signature` header Stripe would send for `payload` (timestamp in unix seconds). */
export function signStripePayload(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}
