/**
 * The real Modelgate stack for the console's browser tests, started by a test file (beforeAll) and
 * stopped by it (afterAll):
 *
 *   const stack = await startConsoleStack();   // 60 s timeout for the hook
 *   stack.baseUrl        the edge (http://127.0.0.1:<port>): the console at /, /api, /v1
 *   stack.root           { username, password } of the root user
 *   stack.api            an ApiClient signed in as root (typed `call('post /api/channel', ...)`)
 *   stack.upstream       the fake model providers (OpenAI, Anthropic, Gemini), stack.upstream.url
 *   stack.stripe         the fake Stripe API; deliverStripeEvent(payload) signs and POSTs a webhook
 *   stack.prisma         the run's database, for checks and setup the API does not offer
 *   stack.createChannel(body), stack.setOption(key, value): setup through /api as root
 *   stack.services       each child process (account, relay, worker, edge, console) and its log
 *   await stack.stop()
 *
 * Account, relay, worker, edge and the console's static server run as child processes (their
 * sources under tsx) on free ports, on the run's private database and Redis prefix, which are
 * emptied first so each file starts clean. The console serves the built app (dist/web: `pnpm build`,
 * which the console's `test` task depends on). A service that dies mid-test prints its log tail.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient, type OperationInput, type OperationResult } from '@modelgate/client';
import {
  createTestPrisma,
  createTestRedis,
  deleteKeysWithPrefix,
  redisPrefix,
  resetDatabase,
  testDatabaseUrl,
  testRedisUrl,
} from '@modelgate/testing';
import { type FakeStripe, signStripePayload, startFakeStripe } from '@modelgate/testing/fake-stripe';
import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { freePorts, retryOnPortClash, type ServiceProcess, startServiceProcess, startWorkerProcess } from '@modelgate/testing/processes';

const APPS_DIR = join(__dirname, '../../../..');
const BUILT_INDEX = join(APPS_DIR, 'console/dist/web/index.html');

/** The fake Stripe account: its API secret, webhook secret and the one price (USD 1.00 a unit). */
export const STRIPE = {
  apiSecret: 'sk_test_console_e2e',
  webhookSecret: 'whsec_console_e2e',
  priceId: 'price_console_e2e',
  unitAmountCents: 100,
} as const;

export const ROOT_USERNAME = 'root';
export const ROOT_PASSWORD = 'root-password-e2e';

export type ServiceName = 'account' | 'relay' | 'worker' | 'edge' | 'console';

export type TestPrisma = ReturnType<typeof createTestPrisma>;

export type ChannelCreateInput = OperationInput<'post /api/channel'>['body'];

export interface ConsoleStack {
  baseUrl: string;
  root: { username: string; password: string };
  api: ApiClient;
  upstream: FakeUpstream;
  stripe: FakeStripe;
  prisma: TestPrisma;
  services: Record<ServiceName, ServiceProcess>;
  /** How long the start took, in milliseconds. */
  startMs: number;
  /** Signs `payload` as Stripe would (STRIPE.webhookSecret) and POSTs it to the webhook through the edge. */
  deliverStripeEvent(payload: string): Promise<Response>;
  createChannel(body: ChannelCreateInput): Promise<OperationResult<'post /api/channel'>>;
  setOption(key: string, value: string | number | boolean): Promise<void>;
  stop(): Promise<void>;
}

let lastStartedBaseUrl: string | undefined;

/** The base URL of the stack this test file started last (openBrowser's default). */
export function currentBaseUrl(): string {
  if (lastStartedBaseUrl === undefined) throw new Error('no console stack is running: call startConsoleStack() first');
  return lastStartedBaseUrl;
}

/** A fetch that keeps the cookies its answers set, as a browser would for one site. */
export function fetchWithCookies(): typeof fetch {
  const cookies = new Map<string, string>();
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(input, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';', 1);
      const separator = pair.indexOf('=');
      if (separator > 0) cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim());
    }
    return response;
  };
}

/** A signed-in ApiClient through the edge (session cookie and New-Api-User). */
export async function signedInClient(baseUrl: string, username: string, password: string): Promise<ApiClient> {
  const api = new ApiClient({ baseUrl, fetch: fetchWithCookies() });
  const login = await api.call('post /api/user/login', { body: { username, password } });
  if (!('id' in login)) throw new Error(`${username} has 2FA on: signedInClient cannot sign in`);
  api.userId = login.id;
  return api;
}

function tsEntry(app: string): string {
  return join(APPS_DIR, app, 'src/index.ts');
}

/** One service on a free port (`portVariable`), and on free ports for each of `morePortVariables`. */
function startHttpService(app: ServiceName, portVariable: string, env: Record<string, string>, morePortVariables: string[] = []): Promise<ServiceProcess> {
  return retryOnPortClash(async () => {
    const [port, ...morePorts] = await freePorts(1 + morePortVariables.length);
    return startServiceProcess({
      entry: tsEntry(app),
      env: { [portVariable]: String(port), ...Object.fromEntries(morePortVariables.map((name, i) => [name, String(morePorts[i])])), LOG_LEVEL: 'warn', ...env },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
      timeoutMs: 45_000,
    });
  });
}

function urlOf(service: ServiceProcess): string {
  return new URL(service.readyUrl).origin;
}

/** Starts everything (see the top of this file); on any failure stops what did start and throws. */
export async function startConsoleStack(): Promise<ConsoleStack> {
  const started = Date.now();
  if (!existsSync(BUILT_INDEX)) {
    throw new Error(`${BUILT_INDEX} is missing: build the console first (in apps/console: npx vite build --config vite.config.mjs)`);
  }
  const prisma = createTestPrisma();
  const redis = createTestRedis();
  await resetDatabase(prisma);
  await deleteKeysWithPrefix(redis, redisPrefix());
  await redis.quit();

  const upstream = await startFakeUpstream();
  const stripe = await startFakeStripe({
    apiKey: STRIPE.apiSecret,
    prices: { [STRIPE.priceId]: { unit_amount: STRIPE.unitAmountCents, currency: 'usd' } },
  });
  const data = { DATABASE_URL: testDatabaseUrl(), REDIS_URL: testRedisUrl(), REDIS_PREFIX: redisPrefix(), DATABASE_POOL_SIZE: '3' };
  // Charges reach the database (and so the usage pages) within 200 ms.
  const relayLaunch = startHttpService('relay', 'RELAY_PORT', { ...data, LEDGER_FLUSH_INTERVAL_MS: '200' });
  const launches: Record<Exclude<ServiceName, 'edge'>, Promise<ServiceProcess>> = {
    // The account service asks the relay to test channels: it starts once the relay's address is known.
    account: relayLaunch.then((relay) => startHttpService('account', 'ACCOUNT_PORT', {
      ...data,
      RELAY_URL: urlOf(relay),
      ROOT_USERNAME,
      ROOT_PASSWORD,
      PASSWORD_HASH_MEMORY_KIB: '256',
      STRIPE_API_BASE: stripe.url,
      STRIPE_API_SECRET: STRIPE.apiSecret,
      STRIPE_WEBHOOK_SECRET: STRIPE.webhookSecret,
      STRIPE_PRICE_ID: STRIPE.priceId,
    })),
    relay: relayLaunch,
    worker: retryOnPortClash(() => startWorkerProcess(testRedisUrl(), { LOG_LEVEL: 'warn' })),
    console: startHttpService('console', 'CONSOLE_PORT', {}),
  };
  const running: ServiceProcess[] = [];
  const stopAll = async () => {
    await Promise.all(running.map((service) => {
      service.kill('SIGTERM');
      return service.exit;
    }));
    await Promise.all([upstream.close(), stripe.close(), prisma.$disconnect()]);
  };
  try {
    const settled = await Promise.allSettled(Object.values(launches));
    for (const result of settled) if (result.status === 'fulfilled') running.push(result.value);
    const failure = settled.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const [account, relay, worker, consoleServer] = running as [ServiceProcess, ServiceProcess, ServiceProcess, ServiceProcess];
    const edge = await startHttpService('edge', 'EDGE_PORT', {
      RELAY_URL: urlOf(relay),
      ACCOUNT_URL: urlOf(account),
      CONSOLE_URL: urlOf(consoleServer),
    }, ['EDGE_METRICS_PORT']);
    running.push(edge);
    const services = { account, relay, worker, console: consoleServer, edge };
    let stopping = false;
    for (const [name, service] of Object.entries(services)) {
      void service.exit.then(({ code, signal }) => {
        if (!stopping) process.stderr.write(`[e2e] ${name} exited (${signal ?? code}) mid-test; its log:\n${service.output().slice(-4000)}\n`);
      });
    }
    const baseUrl = urlOf(edge);
    const api = await signedInClient(baseUrl, ROOT_USERNAME, ROOT_PASSWORD);
    lastStartedBaseUrl = baseUrl;
    return {
      baseUrl,
      root: { username: ROOT_USERNAME, password: ROOT_PASSWORD },
      api,
      upstream,
      stripe,
      prisma,
      services,
      startMs: Date.now() - started,
      deliverStripeEvent: (payload) =>
        fetch(`${baseUrl}/api/stripe/webhook`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': signStripePayload(payload, STRIPE.webhookSecret) },
          body: payload,
        }),
      createChannel: (body) => api.call('post /api/channel', { body }),
      async setOption(key, value) {
        await api.call('put /api/option', { body: { key, value } });
      },
      async stop() {
        stopping = true;
        if (lastStartedBaseUrl === baseUrl) lastStartedBaseUrl = undefined;
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
