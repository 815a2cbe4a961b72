// Vertex AI's service-account sign-in (docs/api.md 2.12): the RS256 JWT assertion, its exchange at
// the key file's token_uri, and the per-channel token cache (one exchange shared by concurrent
// calls, renewed before expiry, failures not kept).
import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeUpstream, fakeVertexServiceAccount, startFakeUpstream, VERTEX_TOKEN_PATH } from '@modelgate/testing/fake-upstream';
import { CredentialRefused, type UpstreamTarget } from '../../src/core/provider';
import { UpstreamFailure } from '../../src/features/upstream/client';
import { type AccessToken, AccessTokens, exchangeAtTokenUri } from '../../src/providers/vertex/access-tokens';
import { serviceAccountOf, signedAssertion } from '../../src/providers/vertex/service-account';
import { thrownBy } from '../thrown';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

function keyFile(fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: 'my-project',
    private_key_id: 'kid-0123',
    private_key: PEM,
    client_email: 'relay@my-project.iam.gserviceaccount.com',
    token_uri: 'https://oauth2.googleapis.com/token',
    ...fields,
  });
}

const decoded = (part: string | undefined) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

function channel(key: string, id = 1): UpstreamTarget {
  return { id, key, origin: 'https://aiplatform.googleapis.com', pathPrefix: '', settings: {} };
}

describe('the JWT assertion', () => {
  it('is RS256-signed by the key file, with the kid, claims and lifetime Google requires', () => {
    const jwt = signedAssertion(serviceAccountOf(keyFile()), 1_700_000_000);
    const [header, claims, signature] = jwt.split('.');
    expect(decoded(header)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-0123' });
    expect(decoded(claims)).toEqual({
      iss: 'relay@my-project.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: 'https://oauth2.googleapis.com/token',
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
    expect(verify('sha256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature ?? '', 'base64url'))).toBe(true);
  });

  it('has no kid when the key file names none', () => {
    const { private_key_id: _, ...withoutId } = JSON.parse(keyFile()) as Record<string, unknown>;
    expect(decoded(signedAssertion(serviceAccountOf(JSON.stringify(withoutId)), 0).split('.')[0])).toEqual({ alg: 'RS256', typ: 'JWT' });
  });

  it.each([
    ['not JSON', PEM, 'it is not a JSON object'],
    ['no client_email', keyFile({ client_email: '' }), 'client_email, private_key and token_uri are required'],
    ['an unreadable private key', keyFile({ private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }), 'its private_key cannot be read'],
    ['a token_uri that is no http(s) URL', keyFile({ token_uri: 'file:///etc/passwd' }), 'token_uri must be an https URL (http only on a loopback address)'],
    ['a plain-http token_uri off this machine', keyFile({ token_uri: 'http://tokens.example/token' }), 'token_uri must be an https URL (http only on a loopback address)'],
  ])('refuses a key with %s, without quoting it', (_name, key, why) => {
    const refusal = thrownBy(() => serviceAccountOf(key));
    expect(refusal).toBeInstanceOf(CredentialRefused);
    expect((refusal as Error).message).toBe(`the channel key is not a usable service account key file: ${why}`);
  });
});

describe('the exchange at token_uri', () => {
  let fake: FakeUpstream;
  let failing: Server;
  let failingUrl: string;
  let failingStatus = 503;
  beforeAll(async () => {
    fake = await startFakeUpstream({ vertexTokenTtlSeconds: 1800 });
    failing = createServer((_req, res) => {
      res.writeHead(failingStatus, { 'content-type': 'application/json' });
      res.end('{"error":"temporarily_unavailable"}');
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/token`;
  });
  afterAll(async () => {
    await fake.close();
    await new Promise((resolve) => failing.close(resolve));
  });

  it('posts the JWT bearer grant as a form and returns the token and its lifetime', async () => {
    fake.requests.length = 0;
    const token = await exchangeAtTokenUri(serviceAccountOf(fakeVertexServiceAccount(fake.url)));
    expect(token).toEqual({ token: expect.stringMatching(/^ya29\./), expiresInSeconds: 1800 });
    const [request] = fake.requests;
    expect(request?.path).toBe(VERTEX_TOKEN_PATH);
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request?.body.toString('utf8'));
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(form.get('assertion')?.split('.')).toHaveLength(3);
  });

  it('is refused (CredentialRefused, OAuth error shown, no secret) when another key signed the JWT', async () => {
    const foreign = JSON.stringify({ ...JSON.parse(fakeVertexServiceAccount(fake.url)), private_key: PEM });
    fake.requests.length = 0;
    const refusal = await exchangeAtTokenUri(serviceAccountOf(foreign)).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(CredentialRefused);
    const { message } = refusal as Error;
    expect(message).toBe('the token endpoint refused the service account key (400 invalid_grant: Invalid JWT Signature.)');
    const assertion = new URLSearchParams(fake.requests[0]?.body.toString('utf8')).get('assertion') ?? '';
    for (const secret of [assertion, assertion.split('.')[2], 'PRIVATE KEY']) expect(message).not.toContain(secret);
  });

  it.each([503, 429])('fails as an UpstreamFailure (another channel may serve) when the endpoint answers %i', async (status) => {
    failingStatus = status;
    const failure = await exchangeAtTokenUri(serviceAccountOf(keyFile({ token_uri: failingUrl }))).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ kind: 'other', message: `the token endpoint answered ${status}` });
  });

  it('fails as an UpstreamFailure when the endpoint cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await exchangeAtTokenUri(serviceAccountOf(keyFile({ token_uri: `http://127.0.0.1:${port}/token` }))).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ kind: 'connect' });
  });
});

/** An exchange the test settles by hand, counting how often it was asked. */
function manualExchange() {
  const pending: { resolve: (token: AccessToken) => void; reject: (err: Error) => void }[] = [];
  const exchange = jest.fn(() => new Promise<AccessToken>((resolve, reject) => pending.push({ resolve, reject })));
  return { exchange, pending };
}

describe('the token cache', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('shares one exchange among 20 concurrent calls and reuses its token', async () => {
    const { exchange, pending } = manualExchange();
    const tokens = new AccessTokens(exchange, clock);
    const target = channel(keyFile());
    const calls = Array.from({ length: 20 }, () => tokens.authorization(target));
    expect(exchange).toHaveBeenCalledTimes(1);
    pending[0]?.resolve({ token: 'tok-1', expiresInSeconds: 3600 });
    expect(new Set(await Promise.all(calls))).toEqual(new Set(['Bearer tok-1']));
    expect(await tokens.authorization(target)).toBe('Bearer tok-1');
    expect(exchange).toHaveBeenCalledTimes(1);
  });

  it('renews from 5 minutes before expiry (half the lifetime of a short one), serving the cached token until the new one is in', async () => {
    const { exchange, pending } = manualExchange();
    const tokens = new AccessTokens(exchange, clock);
    const target = channel(keyFile());
    now = 1_000_000;
    const first = tokens.authorization(target);
    pending[0]?.resolve({ token: 'tok-1', expiresInSeconds: 3600 });
    expect(await first).toBe('Bearer tok-1');
    now += 3300_000 - 1;
    expect(await tokens.authorization(target)).toBe('Bearer tok-1');
    expect(exchange).toHaveBeenCalledTimes(1);
    // In the renewal window: the renewal starts, the call keeps the valid token.
    now += 1;
    expect(await tokens.authorization(target)).toBe('Bearer tok-1');
    expect(await tokens.authorization(target)).toBe('Bearer tok-1');
    expect(exchange).toHaveBeenCalledTimes(2);
    pending[1]?.resolve({ token: 'tok-2', expiresInSeconds: 60 });
    await Promise.resolve();
    expect(await tokens.authorization(target)).toBe('Bearer tok-2');
    // A short-lived token is renewed at half its lifetime.
    now += 29_999;
    expect(await tokens.authorization(target)).toBe('Bearer tok-2');
    expect(exchange).toHaveBeenCalledTimes(2);
    now += 1;
    await tokens.authorization(target);
    expect(exchange).toHaveBeenCalledTimes(3);
  });

  it('keeps serving the cached token while a renewal fails, and waits for an exchange only once the token expired', async () => {
    const { exchange, pending } = manualExchange();
    const tokens = new AccessTokens(exchange, clock);
    const target = channel(keyFile());
    now = 1_000_000;
    const first = tokens.authorization(target);
    pending[0]?.resolve({ token: 'tok-1', expiresInSeconds: 3600 });
    await first;
    now += 3400_000;
    expect(await tokens.authorization(target)).toBe('Bearer tok-1');
    pending[1]?.reject(new UpstreamFailure('connect', 'the token endpoint is down'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await tokens.authorization(target)).toBe('Bearer tok-1');
    expect(exchange).toHaveBeenCalledTimes(3);
    now += 200_000;
    // Expired: the call waits for the renewal under way (no second one).
    const expired = tokens.authorization(target);
    pending[2]?.resolve({ token: 'tok-3', expiresInSeconds: 3600 });
    expect(await expired).toBe('Bearer tok-3');
    expect(exchange).toHaveBeenCalledTimes(3);
  });

  it('keeps no failed exchange: every waiter gets the failure, the next call exchanges again', async () => {
    const { exchange, pending } = manualExchange();
    const tokens = new AccessTokens(exchange, clock);
    const target = channel(keyFile());
    const calls = [tokens.authorization(target), tokens.authorization(target)];
    pending[0]?.reject(new CredentialRefused('refused'));
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(CredentialRefused);

    const retry = tokens.authorization(target);
    expect(exchange).toHaveBeenCalledTimes(2);
    pending[1]?.resolve({ token: 'tok-2', expiresInSeconds: 3600 });
    expect(await retry).toBe('Bearer tok-2');
  });

  it('keeps no exchange that failed at once', async () => {
    const exchange = jest.fn<Promise<AccessToken>, []>(() => {
      throw new UpstreamFailure('other', 'boom');
    });
    const tokens = new AccessTokens(exchange, clock);
    const target = channel(keyFile());
    await expect(tokens.authorization(target)).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(tokens.authorization(target)).rejects.toBeInstanceOf(UpstreamFailure);
    expect(exchange).toHaveBeenCalledTimes(2);
  });

  it('exchanges again after the token was refused upstream (forget), and per channel id and key', async () => {
    const exchange: jest.Mock<Promise<AccessToken>> = jest.fn(async () => ({ token: `tok-${exchange.mock.calls.length}`, expiresInSeconds: 3600 }));
    const tokens = new AccessTokens(exchange, clock);
    const first = channel(keyFile());
    expect(await tokens.authorization(first)).toBe('Bearer tok-1');
    expect(tokens.forget(first, 'Bearer tok-1')).toBe(true);
    expect(await tokens.authorization(first)).toBe('Bearer tok-2');
    // A late refusal of the token already replaced drops nothing, and the call may still be asked again.
    expect(tokens.forget(first, 'Bearer tok-1')).toBe(true);
    expect(await tokens.authorization(first)).toBe('Bearer tok-2');
    // Another channel, and the same channel with a new key, have their own tokens.
    expect(await tokens.authorization(channel(keyFile(), 2))).toBe('Bearer tok-3');
    const rekeyed = channel(keyFile({ private_key_id: 'kid-new' }));
    expect(await tokens.authorization(rekeyed)).toBe('Bearer tok-4');
    expect(tokens.accountOf(rekeyed).privateKeyId).toBe('kid-new');
    // forget() of the old key leaves the new key's token alone.
    expect(tokens.forget(first, 'Bearer tok-2')).toBe(false);
    expect(await tokens.authorization(rekeyed)).toBe('Bearer tok-4');
    expect(exchange).toHaveBeenCalledTimes(4);
  });

  it('forgets the key files and tokens of channels no longer loaded', async () => {
    const exchange: jest.Mock<Promise<AccessToken>> = jest.fn(async () => ({ token: `tok-${exchange.mock.calls.length}`, expiresInSeconds: 3600 }));
    const tokens = new AccessTokens(exchange, clock);
    const kept = channel(keyFile(), 1);
    const deleted = channel(keyFile(), 2);
    await tokens.authorization(kept);
    await tokens.authorization(deleted);
    tokens.forgetChannels(new Set([1]));
    expect(await tokens.authorization(kept)).toBe('Bearer tok-1');
    expect(await tokens.authorization(deleted)).toBe('Bearer tok-3');
    expect(exchange).toHaveBeenCalledTimes(3);
  });

  it('reads the key file once per channel key', () => {
    const tokens = new AccessTokens(jest.fn(), clock);
    const target = channel(keyFile());
    expect(tokens.accountOf(target)).toBe(tokens.accountOf({ ...target }));
    expect(thrownBy(() => tokens.accountOf(channel('not json', 3)))).toBeInstanceOf(CredentialRefused);
  });
});
