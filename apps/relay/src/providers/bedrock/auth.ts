import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import { CredentialRefused, type UpstreamCall, type UpstreamTarget } from '../../core/provider';

const facts = CHANNEL_TYPES[CHANNEL_TYPE.bedrock];

/** SigV4's service name for every Bedrock endpoint. */
const SERVICE = 'bedrock';

/**
 * SHA-256 on node:crypto, as the AWS SDK itself signs in Node: the signer hashes the whole body, and
 * the pure-JS hash takes about four to six times as long on a large prompt.
 */
const NodeSha256 = Hash.bind(null, 'sha256');

/** The headers SigV4 signing adds to a request. */
const SIGNING_HEADERS = ['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'] as const;

/** How a channel's calls are authenticated, worked out once per channel key, region and address. */
type Credential =
  | { kind: 'bearer'; authorization: string }
  | { kind: 'sigv4'; signer: SignatureV4; protocol: string; hostname: string; host: string }
  /** The key or the settings cannot be used: every call fails as a refused credential. */
  | { kind: 'refused'; reason: string };

interface CachedCredential {
  key: string;
  region: string | undefined;
  origin: string;
  credential: Credential;
}

/** Per channel id; replaced when the channel's key, region or address changes. */
const credentials = new Map<number, CachedCredential>();

/**
 * `ACCESS_KEY_ID|SECRET_ACCESS_KEY[|SESSION_TOKEN]`, signed with SigV4 for the channel's region, or
 * a Bedrock API key (no `|`) sent as a bearer token (docs/api.md 2.12).
 */
function credentialOf(channel: UpstreamTarget): Credential {
  const keyProblem = facts.checkKey?.(channel.key);
  if (keyProblem !== undefined) return { kind: 'refused', reason: `the AWS Bedrock channel key ${keyProblem}` };
  if (!channel.key.includes('|')) return { kind: 'bearer', authorization: `Bearer ${channel.key}` };
  const region = channel.settings.region;
  if (!region) return { kind: 'refused', reason: 'an AWS Bedrock channel signing with AWS credentials needs settings.region' };
  const [accessKeyId = '', secretAccessKey = '', sessionToken] = channel.key.split('|');
  const url = new URL(channel.origin);
  return {
    kind: 'sigv4',
    signer: new SignatureV4({ service: SERVICE, region, credentials: { accessKeyId, secretAccessKey, sessionToken }, sha256: NodeSha256 }),
    protocol: url.protocol,
    hostname: url.hostname,
    host: url.host,
  };
}

/** Forgets the credentials of the channels no longer loaded. */
export function forgetBedrockChannels(loaded: ReadonlySet<number>): void {
  for (const id of credentials.keys()) if (!loaded.has(id)) credentials.delete(id);
}

function cachedCredential(channel: UpstreamTarget): Credential {
  const cached = credentials.get(channel.id);
  const region = channel.settings.region;
  if (cached && cached.key === channel.key && cached.region === region && cached.origin === channel.origin) return cached.credential;
  const credential = credentialOf(channel);
  credentials.set(channel.id, { key: channel.key, region, origin: channel.origin, credential });
  return credential;
}

/**
 * Authenticates a built call (docs/api.md 2.12): a bearer API key as is; AWS credentials by a SigV4
 * signature over the method, the final path (its model id already percent-encoded, which SigV4's
 * canonical URI encodes once more), the `host` of the channel's address, the other headers and the
 * body. Throws CredentialRefused when the key or the region cannot be used.
 */
export async function authorizeBedrock(channel: UpstreamTarget, call: UpstreamCall): Promise<void> {
  const credential = cachedCredential(channel);
  if (credential.kind === 'refused') throw new CredentialRefused(credential.reason);
  if (credential.kind === 'bearer') {
    call.headers.authorization = credential.authorization;
    return;
  }
  const { headers } = call;
  headers.host = credential.host;
  const request = new HttpRequest({ method: 'POST', protocol: credential.protocol, hostname: credential.hostname, path: call.path, headers, body: call.body });
  const signed = await credential.signer.sign(request);
  for (const name of SIGNING_HEADERS) {
    const value = signed.headers[name];
    if (value !== undefined) headers[name] = value;
  }
}
