import { tokenUriProblem } from '@modelgate/schemas';
import { createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { jsonObjectIn } from '../../core/json';
import { CredentialRefused } from '../../core/provider';

/** The scope of every Vertex AI call. */
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Google refuses assertions that live longer than an hour. */
const ASSERTION_LIFETIME_SECONDS = 3600;

/** What the relay uses of a service account's JSON key file (docs/api.md 2.12). */
export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  /** The JWT header's `kid`: which of the account's keys signed it. */
  privateKeyId: string | undefined;
  /** Where the signed assertion is exchanged for an access token. */
  tokenUri: string;
  /** The key's project, ready for a URL path; undefined when the file names none. */
  projectPath: string | undefined;
}

function unusableKey(why: string): CredentialRefused {
  return new CredentialRefused(`the channel key is not a usable service account key file: ${why}`);
}

function stringField(file: Record<string, unknown>, name: string): string | undefined {
  const value = file[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The channel key read as a service account key file. Throws CredentialRefused, naming the fields
 * at fault and never their values, when it cannot sign in.
 */
export function serviceAccountOf(key: string): ServiceAccount {
  const file = jsonObjectIn(key);
  if (!file) throw unusableKey('it is not a JSON object');
  const clientEmail = stringField(file, 'client_email');
  const pem = stringField(file, 'private_key');
  const tokenUri = stringField(file, 'token_uri');
  if (!clientEmail || !pem || !tokenUri) throw unusableKey('client_email, private_key and token_uri are required');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw unusableKey('its private_key cannot be read');
  }
  const tokenUriRefused = tokenUriProblem(tokenUri);
  if (tokenUriRefused) throw unusableKey(tokenUriRefused);
  const projectId = stringField(file, 'project_id');
  return {
    clientEmail,
    privateKey,
    privateKeyId: stringField(file, 'private_key_id'),
    tokenUri,
    projectPath: projectId === undefined ? undefined : encodeURIComponent(projectId),
  };
}

const base64url = (json: object) => Buffer.from(JSON.stringify(json)).toString('base64url');

/** The RS256-signed JWT that asks `token_uri` for a cloud-platform access token. */
export function signedAssertion(account: ServiceAccount, nowSeconds: number): string {
  const header = account.privateKeyId === undefined ? { alg: 'RS256', typ: 'JWT' } : { alg: 'RS256', typ: 'JWT', kid: account.privateKeyId };
  const claims = {
    iss: account.clientEmail,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: account.tokenUri,
    iat: nowSeconds,
    exp: nowSeconds + ASSERTION_LIFETIME_SECONDS,
  };
  const signingInput = `${base64url(header)}.${base64url(claims)}`;
  return `${signingInput}.${sign('sha256', Buffer.from(signingInput), account.privateKey).toString('base64url')}`;
}
