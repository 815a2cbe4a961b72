import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { OptionValues } from '@modelgate/schemas';
import * as oidc from 'openid-client';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';

/** The provider settings of the root options (docs/api.md 3.9.2). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

type OidcOptions = Pick<OptionValues, 'OIDCEnabled' | 'OIDCIssuer' | 'OIDCClientId' | 'OIDCClientSecret'>;

/** The settings when SSO is on and complete; the client secret is needed too (client_secret_basic). */
export function oidcSettingsOf(options: OidcOptions): OidcSettings | undefined {
  const issuer = options.OIDCIssuer.trim();
  const clientId = options.OIDCClientId.trim();
  if (!options.OIDCEnabled || !issuer || !clientId || !options.OIDCClientSecret) return undefined;
  return { issuer, clientId, clientSecret: options.OIDCClientSecret };
}

export function isOidcConfigured(options: OidcOptions): boolean {
  return oidcSettingsOf(options) !== undefined;
}

/** Seconds each request to the provider may take (discovery, token, JWKS, userinfo). */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** Discovery is redone after this, so a provider's changed endpoints or keys are picked up. */
const CONFIGURATION_MAX_AGE_MS = 60 * 60 * 1000;

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * The issuer as a URL. Tokens and the client secret travel to it, so it must be https; plain http
 * is accepted only on the loopback interface (a provider on the same machine).
 */
function issuerUrl(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error('OIDCIssuer is not an absolute URL');
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname))) return url;
  throw new Error('OIDCIssuer must be an https:// URL (http only on the loopback interface)');
}

interface CachedConfiguration {
  key: string;
  createdAt: number;
  configuration: Promise<oidc.Configuration>;
}

const cache = new WeakMap<AccountDeps, CachedConfiguration>();

/** What the cached discovery depends on; the secret only as a hash, so it is not kept twice in memory. */
function cacheKey(settings: OidcSettings): string {
  return [settings.issuer, settings.clientId, createHash('sha256').update(settings.clientSecret).digest('hex')].join('\n');
}

async function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const url = issuerUrl(settings.issuer);
  return oidc.discovery(url, settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), {
    timeout: PROVIDER_TIMEOUT_SECONDS,
    // Tokens from the token endpoint are trusted over TLS by default; the ID token's signature is
    // checked against the provider's JWKS as well (docs/api.md 3.9.2).
    execute: url.protocol === 'http:' ? [oidc.enableNonRepudiationChecks, oidc.allowInsecureRequests] : [oidc.enableNonRepudiationChecks],
  });
}

/**
 * The client configuration from the provider's discovery document, cached per app; discovered again
 * when the options change, after an hour, and after a failure (`forgetConfiguration`).
 */
export function configurationOf(deps: AccountDeps, settings: OidcSettings): Promise<oidc.Configuration> {
  const key = cacheKey(settings);
  const cached = cache.get(deps);
  if (cached && cached.key === key && nowMs(deps) - cached.createdAt < CONFIGURATION_MAX_AGE_MS) return cached.configuration;
  const configuration = discover(settings);
  const entry = { key, createdAt: nowMs(deps), configuration };
  cache.set(deps, entry);
  configuration.catch(() => {
    if (cache.get(deps) === entry) cache.delete(deps);
  });
  return configuration;
}

/** Drops the cached configuration: the next sign-in discovers the provider afresh. */
export function forgetConfiguration(deps: AccountDeps): void {
  cache.delete(deps);
}
