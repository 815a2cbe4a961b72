import { request } from 'undici';
import { jsonObjectIn } from '../../core/json';
import { CredentialRefused, type UpstreamTarget } from '../../core/provider';
import { classifyUpstreamError, UpstreamFailure } from '../../features/upstream/client';
import { type ServiceAccount, serviceAccountOf, signedAssertion } from './service-account';

const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** Connect, first byte and between chunks: the calls waiting on an exchange wait this long at most per step. */
const EXCHANGE_TIMEOUT_MS = 10_000;

/** A token answer is a few hundred bytes: more is not one. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** How long before it expires a token is renewed (at most half the lifetime of a short-lived one). */
const RENEW_BEFORE_MS = 5 * 60_000;

/** Statuses of a token endpoint that say nothing about the key: another try (elsewhere, later) may pass. */
const TRANSIENT_REFUSALS = new Set([408, 429]);

export interface AccessToken {
  token: string;
  expiresInSeconds: number;
}

/**
 * Exchanges a service account's signed assertion for an access token. Throws CredentialRefused
 * when the token endpoint refuses the key, UpstreamFailure when it cannot be reached or fails.
 */
export type TokenExchange = (account: ServiceAccount) => Promise<AccessToken>;

interface ChannelCredentials {
  /** The channel key these were read from: a new key starts afresh. */
  readonly key: string;
  readonly account: ServiceAccount;
  /** `Bearer <token>`, used until `expiresAt`, renewed from `renewAt` on. */
  authorization: string | undefined;
  renewAt: number;
  expiresAt: number;
  /** The exchange under way, shared by every call that needs a token meanwhile. */
  exchange: Promise<string> | undefined;
}

/**
 * Access tokens per channel (docs/api.md 2.12): the key file read once per channel id and key, one
 * exchange shared by concurrent calls, its token reused until shortly before it expires. A failed
 * exchange leaves nothing behind: the next call tries again.
 */
export class AccessTokens {
  private readonly channels = new Map<number, ChannelCredentials>();

  constructor(
    private readonly exchange: TokenExchange = exchangeAtTokenUri,
    private readonly now: () => number = Date.now,
  ) {}

  /** The channel's service account. Throws CredentialRefused when its key is not a usable key file. */
  accountOf(channel: UpstreamTarget): ServiceAccount {
    return this.credentialsOf(channel).account;
  }

  /**
   * `Bearer <token>`: the cached one while it has not expired, else the outcome of the one exchange
   * under way for the channel. From `renewAt` on, a call starts the renewal but keeps the token it
   * has: a token endpoint that fails meanwhile costs no call.
   */
  authorization(channel: UpstreamTarget): Promise<string> {
    const credentials = this.credentialsOf(channel);
    const now = this.now();
    const cached = credentials.authorization !== undefined && now < credentials.expiresAt ? credentials.authorization : undefined;
    if (cached !== undefined && now < credentials.renewAt) return Promise.resolve(cached);
    const exchange = this.exchangeFor(credentials);
    if (cached === undefined) return exchange;
    // The renewal's failure is the next caller's concern (it tries again): this one has a token.
    exchange.catch(() => undefined);
    return Promise.resolve(cached);
  }

  /**
   * The upstream refused `authorization`, a token of this channel (revoked, expired early). True when
   * it was the cached token, now dropped, so a call asked again gets a fresh one; false when the
   * cache already moved on (another call's refusal, a renewal) or never held it.
   */
  forget(channel: UpstreamTarget, authorization: string | undefined): boolean {
    const credentials = this.channels.get(channel.id);
    if (credentials?.key !== channel.key || authorization === undefined) return false;
    if (credentials.authorization === authorization) {
      credentials.authorization = undefined;
      return true;
    }
    return credentials.authorization !== undefined || credentials.exchange !== undefined;
  }

  /** Forgets the key files and tokens of the channels no longer loaded. */
  forgetChannels(loaded: ReadonlySet<number>): void {
    for (const id of this.channels.keys()) if (!loaded.has(id)) this.channels.delete(id);
  }

  /** The exchange under way for the channel, or a new one. */
  private exchangeFor(credentials: ChannelCredentials): Promise<string> {
    // `finally` runs after the assignment, even when the exchange fails at once.
    credentials.exchange ??= this.renew(credentials).finally(() => {
      credentials.exchange = undefined;
    });
    return credentials.exchange;
  }

  private async renew(credentials: ChannelCredentials): Promise<string> {
    const requestedAt = this.now();
    const { token, expiresInSeconds } = await this.exchange(credentials.account);
    const lifetimeMs = expiresInSeconds * 1000;
    credentials.authorization = `Bearer ${token}`;
    credentials.expiresAt = requestedAt + lifetimeMs;
    credentials.renewAt = credentials.expiresAt - Math.min(RENEW_BEFORE_MS, lifetimeMs / 2);
    return credentials.authorization;
  }

  private credentialsOf(channel: UpstreamTarget): ChannelCredentials {
    let credentials = this.channels.get(channel.id);
    if (credentials?.key !== channel.key) {
      credentials = { key: channel.key, account: serviceAccountOf(channel.key), authorization: undefined, renewAt: 0, expiresAt: 0, exchange: undefined };
      this.channels.set(channel.id, credentials);
    }
    return credentials;
  }
}

/** An OAuth error field worth showing: a short text with nothing that looks like a token in it. */
function shownText(value: unknown, maxLength: number): string | undefined {
  return typeof value === 'string' && value.length <= maxLength && !/[\w+/=.-]{24,}/.test(value) ? value : undefined;
}

/** Why the token endpoint refused, from its OAuth error (`{error, error_description}`) when it gave a readable one. */
function refusalOf(status: number, body: Buffer): CredentialRefused {
  const answer = jsonObjectIn(body.toString('utf8'));
  const error = shownText(answer?.error, 64);
  const description = shownText(answer?.error_description, 200);
  const detail = [error, description].filter((text) => text !== undefined).join(': ');
  return new CredentialRefused(`the token endpoint refused the service account key (${status}${detail ? ` ${detail}` : ''})`);
}

async function boundedBody(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_TOKEN_ANSWER_BYTES) {
      body.destroy();
      throw new UpstreamFailure('other', 'the token endpoint answered with an oversized body');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The JWT bearer grant at the key file's `token_uri`, as Google's auth libraries send it. */
export async function exchangeAtTokenUri(account: ServiceAccount): Promise<AccessToken> {
  const assertion = signedAssertion(account, Math.floor(Date.now() / 1000));
  let status: number;
  let body: Buffer;
  try {
    const response = await request(account.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
      headersTimeout: EXCHANGE_TIMEOUT_MS,
      bodyTimeout: EXCHANGE_TIMEOUT_MS,
    });
    status = response.statusCode;
    body = await boundedBody(response.body);
  } catch (err) {
    const failure = classifyUpstreamError(err);
    // Nothing reached a model: a slow token endpoint is a channel to skip, not the client's timeout.
    throw new UpstreamFailure(failure.kind === 'timeout' ? 'connect' : failure.kind, `the token exchange failed: ${failure.message}`);
  }
  if (status >= 400 && status < 500 && !TRANSIENT_REFUSALS.has(status)) throw refusalOf(status, body);
  if (status < 200 || status >= 300) throw new UpstreamFailure('other', `the token endpoint answered ${status}`);
  const answer = jsonObjectIn(body.toString('utf8'));
  const token = answer?.access_token;
  const expiresIn = answer?.expires_in;
  if (typeof token !== 'string' || token === '' || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
    throw new UpstreamFailure('other', 'the token endpoint answered with an unexpected body');
  }
  return { token, expiresInSeconds: expiresIn };
}
