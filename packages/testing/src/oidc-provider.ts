// A real OpenID Connect provider (panva's certified oidc-provider) on a loopback port, for the
// gateway's single sign-on tests: one confidential client (client_secret_basic), accounts the test
// fills in, a minimal sign-in page of its own, consent granted without asking (as a company's
// provider does for its own applications), and a way to tamper with the ID tokens it issues.
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

/** The claims of one account (its `sub` is the key it is stored under). */
export interface TestAccountClaims {
  preferred_username?: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/** How the next ID tokens are changed: claims rewritten, and signed with the provider's key or another one. */
export interface IdTokenTampering {
  claims?: (claims: Record<string, unknown>) => Record<string, unknown>;
  signedBy?: 'provider' | 'another-key';
}

export interface TestIdentityProvider {
  /** `http://127.0.0.1:<port>`: the OIDCIssuer to configure. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by `sub`, as the sign-in page's username field names them. */
  accounts: Map<string, TestAccountClaims>;
  /** Changes every ID token from now on (undefined: stop). */
  tamperIdTokens(tampering: IdTokenTampering | undefined): void;
  /**
   * Plays a browser at the provider: opens the authorization URL, signs in as `sub` on the sign-in
   * page (or presses Cancel), and returns where the provider sends the browser back (the client's
   * redirect URI with `code` and `state`, or `error`), without following it.
   */
  signIn(authorizationUrl: string, sub: string, options?: { cancel?: boolean }): Promise<URL>;
  close(): Promise<void>;
}

const KEY_ID = 'test-signing-key';

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** The JWT with its payload changed and signed again (RS256) with `key`. */
function resign(jwt: string, tampering: IdTokenTampering, providerKey: KeyObject, anotherKey: KeyObject): string {
  const [header = '', payload = ''] = jwt.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  const signingInput = `${header}.${base64url(JSON.stringify(tampering.claims ? tampering.claims(claims) : claims))}`;
  const key = tampering.signedBy === 'another-key' ? anotherKey : providerKey;
  return `${signingInput}.${base64url(sign('sha256', Buffer.from(signingInput), key))}`;
}

/** The provider's storage in a Map (its built-in one works alike but warns at every start). */
function memoryAdapter(store: Map<string, AdapterPayload>): (model: string) => Adapter {
  return (model) => {
    const keyOf = (id: string) => `${model}:${id}`;
    const entries = () => [...store].filter(([key]) => key.startsWith(`${model}:`));
    return {
      async upsert(id, payload) {
        store.set(keyOf(id), payload);
      },
      async find(id) {
        return store.get(keyOf(id));
      },
      async findByUid(uid) {
        return entries().find(([, payload]) => payload.uid === uid)?.[1];
      },
      async findByUserCode(userCode) {
        return entries().find(([, payload]) => payload.userCode === userCode)?.[1];
      },
      async consume(id) {
        const payload = store.get(keyOf(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        store.delete(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        for (const [key, payload] of [...store]) if (payload.grantId === grantId) store.delete(key);
      },
    };
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function signInPage(error?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Test identity provider</title>
<style>body{font-family:sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;box-sizing:border-box;margin:.4rem 0}input,button{padding:.6rem;font-size:1rem}</style></head>
<body><h1>Test identity provider</h1>${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post"><label>Username <input name="login" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit" name="action" value="sign-in">Continue</button>
<button type="submit" name="action" value="cancel">Cancel</button></form></body></html>`;
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

/** A fetch with one site's cookies, not following redirects: what the provider's pages need of a browser. */
function browserAt(): (url: URL, init?: RequestInit) => Promise<Response> {
  const cookies = new Map<string, string>();
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';', 1);
      const separator = pair.indexOf('=');
      if (separator <= 0) continue;
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    return response;
  };
}

/** Starts the provider; `redirectUri` is the one redirect URI its client is registered with. */
export async function startTestIdentityProvider(options: { redirectUri: string; clientId?: string; clientSecret?: string }): Promise<TestIdentityProvider> {
  const clientId = options.clientId ?? 'modelgate-test';
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('base64url');
  const accounts = new Map<string, TestAccountClaims>();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const anotherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: KEY_ID, use: 'sig', alg: 'RS256' };
  let tampering: IdTokenTampering | undefined;

  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    adapter: memoryAdapter(new Map()),
    jwks: { keys: [jwk] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 3600, Session: 3600 },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: KoaContextWithOIDC, sub: string) => {
      const claims = accounts.get(sub);
      return claims ? { accountId: sub, claims: () => ({ sub, ...claims }) } : undefined;
    },
    // Consent is implied for this first-party client: every sign-in gets the scopes it asks for.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const accountId = ctx.oidc.session?.accountId;
      const client = ctx.oidc.client;
      if (!accountId || !client) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (tampering && ctx.path === '/token' && typeof body?.id_token === 'string') {
      ctx.body = { ...body, id_token: resign(body.id_token, tampering, createPrivateKey({ key: jwk, format: 'jwk' }), anotherKey) };
    }
  });

  const providerCallback = provider.callback();
  const interaction = async (req: IncomingMessage, res: ServerResponse) => {
    await provider.interactionDetails(req, res);
    if (req.method !== 'POST') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(signInPage());
      return;
    }
    const form = await formOf(req);
    if (form.get('action') === 'cancel') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user cancelled' }, { mergeWithLastSubmission: false });
      return;
    }
    const login = form.get('login') ?? '';
    if (!accounts.has(login)) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(signInPage('Unknown username'));
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
  };
  handle = (req, res) => {
    if (/^\/interaction\/[A-Za-z0-9_-]+$/.test(new URL(req.url ?? '/', issuer).pathname)) {
      interaction(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(400, { 'Content-Type': 'text/plain' });
        res.end(`interaction failed: ${(err as Error).message}`);
      });
      return;
    }
    void providerCallback(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamperIdTokens(change) {
      tampering = change;
    },
    async signIn(authorizationUrl, sub, { cancel = false } = {}) {
      const browser = browserAt();
      let url = new URL(authorizationUrl);
      let form: URLSearchParams | undefined;
      for (let hop = 0; hop < 10; hop++) {
        const response = form
          ? await browser(url, { method: 'POST', body: form, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })
          : await browser(url);
        form = undefined;
        const location = response.headers.get('location');
        if (location !== null) {
          url = new URL(location, url);
          if (url.origin !== issuer) return url;
          continue;
        }
        const page = await response.text();
        if (response.status !== 200 || !page.includes('name="login"')) throw new Error(`provider answered ${response.status}: ${page.slice(0, 300)}`);
        form = new URLSearchParams(cancel ? { action: 'cancel' } : { login: sub, password: 'any password', action: 'sign-in' });
      }
      throw new Error('too many redirects at the provider');
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
