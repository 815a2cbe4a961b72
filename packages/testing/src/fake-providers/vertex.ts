// Fake Google Vertex AI: an OAuth token endpoint for a fake service account, and the Gemini and
// Anthropic fakes behind Vertex's model routes.
// - POST /token (form: grant_type urn:ietf:params:oauth:grant-type:jwt-bearer, assertion <JWT>):
//   the JWT must be RS256-signed by the key of `fakeVertexServiceAccount(url)` (else 400
//   invalid_grant "Invalid JWT Signature."), with iss = its client_email, aud = its token_uri,
//   scope including cloud-platform, exp - iat at most an hour and covering now. Answers
//   `{access_token, expires_in: vertexTokenTtlSeconds, token_type: "Bearer"}`. Every exchange is a
//   recorded request (path /token); the modes do not apply to it.
// - Model routes (/v1/ or /v1beta1/) need `Authorization: Bearer <an unexpired token from /token>`
//   (else 401 UNAUTHENTICATED); recorded as `cloud: {project, region, model, auth: 'bearer'}`:
//   .../projects/{project}/locations/{region}/publishers/google/models/{model}:generateContent,
//   :streamGenerateContent (SSE) and :countTokens answer as the Gemini fake;
//   .../publishers/anthropic/models/{model}:rawPredict and :streamRawPredict (always a stream) as
//   the Anthropic fake, the body with `anthropic_version: "vertex-2023-10-16"` and no `model` (else
//   400 invalid_request_error); models/count-tokens:rawPredict counts tokens.
// - Errors: Google-shaped platform errors (401, 403, 429 and quotaExhausted as RESOURCE_EXHAUSTED);
//   the models' own (error400, error500, overloaded) in the shape of the model behind the route.
import { createHmac, generateKeyPairSync, type KeyObject, randomBytes, verify } from 'node:crypto';
import { countTokens, messages as anthropicMessages, reply as anthropicReply, anthropicProvider } from './anthropic';
import { geminiProvider, reply as googleReply } from './gemini';
import {
  bearerToken,
  errorAnswer,
  type FakeProvider,
  type FaultReplies,
  isObject,
  type JsonObject,
  jsonAnswer,
  type Operation,
  type PlainRoute,
  type RecordedRequest,
  type WholeAnswer,
} from './shared';

export const VERTEX_TOKEN_PATH = '/token';
/** The project of the fake service account. */
export const FAKE_VERTEX_PROJECT = 'fake-project';
const CLIENT_EMAIL = `modelgate-fake@${FAKE_VERTEX_PROJECT}.iam.gserviceaccount.com`;
const PRIVATE_KEY_ID = 'f4ke0000000000000000000000000000000000a1';
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const MAX_JWT_LIFETIME_SECONDS = 3600;
const CLOCK_SKEW_SECONDS = 60;
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const ROUTE = /^\/v1(?:beta1)?\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):(\w+)$/;

// Made on first use: key generation takes a noticeable moment, and most users of the fake never need it.
let serviceAccountKey: { privateKey: KeyObject; publicKey: KeyObject } | undefined;
const keyPair = () => (serviceAccountKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }));

/** The JSON key file of the fake's service account, its `token_uri` the fake at `fakeUrl`. */
export function fakeVertexServiceAccount(fakeUrl: string): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: FAKE_VERTEX_PROJECT,
    private_key_id: PRIVATE_KEY_ID,
    private_key: keyPair().privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: CLIENT_EMAIL,
    client_id: '100000000000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: `${fakeUrl}${VERTEX_TOKEN_PATH}`,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(CLIENT_EMAIL)}`,
    universe_domain: 'googleapis.com',
  }, null, 2);
}

// Access tokens carry their expiry and a MAC, so any fake server can check them without keeping them.
const TOKEN_SECRET = randomBytes(32);
const TOKEN = /^ya29\.fake\.(\d+)\.([\w-]+)\.([\w-]+)$/;
const tokenMac = (payload: string) => createHmac('sha256', TOKEN_SECRET).update(payload).digest('base64url');

function issueToken(expiresAtMs: number): string {
  const payload = `${expiresAtMs}.${randomBytes(9).toString('base64url')}`;
  return `ya29.fake.${payload}.${tokenMac(payload)}`;
}

function tokenValid(token: string): boolean {
  const parts = TOKEN.exec(token);
  return parts !== null && parts[3] === tokenMac(`${parts[1]}.${parts[2]}`) && Number(parts[1]) > Date.now();
}

const oauthError = (error: string, description: string): WholeAnswer => jsonAnswer({ error, error_description: description }, 'application/json; charset=utf-8', 400);

function decodeJwtPart(part: string): JsonObject | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Google's refusal of a JWT assertion, or undefined when it is good for `audience`. */
function jwtRefusal(assertion: string, audience: string): WholeAnswer | undefined {
  const [head = '', claims = '', signature = '', ...rest] = assertion.split('.');
  const signed = rest.length === 0 && decodeJwtPart(head)?.alg === 'RS256'
    && verify('sha256', Buffer.from(`${head}.${claims}`), keyPair().publicKey, Buffer.from(signature, 'base64url'));
  const payload = signed ? decodeJwtPart(claims) : undefined;
  if (!payload) return oauthError('invalid_grant', 'Invalid JWT Signature.');
  if (payload.iss !== CLIENT_EMAIL) return oauthError('invalid_grant', 'Invalid grant: account not found');
  if (payload.aud !== audience) return oauthError('invalid_grant', 'Invalid JWT: Failed audience check.');
  if (typeof payload.scope !== 'string' || !payload.scope.split(' ').includes(CLOUD_PLATFORM_SCOPE)) {
    return oauthError('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  }
  const now = Math.floor(Date.now() / 1000);
  const { iat, exp } = payload;
  if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + CLOCK_SKEW_SECONDS || exp <= now || exp - iat > MAX_JWT_LIFETIME_SECONDS) {
    return oauthError('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
  }
  return undefined;
}

export const vertexTokenRoute: PlainRoute = {
  dialect: 'vertex',
  answer(request, { vertexTokenTtlSeconds }) {
    const form = new URLSearchParams(request.body.toString('utf8'));
    const grantType = form.get('grant_type') ?? '';
    if (grantType !== JWT_BEARER_GRANT) return oauthError('unsupported_grant_type', `Invalid grant_type: ${grantType}`);
    const refusal = jwtRefusal(form.get('assertion') ?? '', `http://${request.headers.host}${VERTEX_TOKEN_PATH}`);
    if (refusal) return refusal;
    const accessToken = issueToken(Date.now() + vertexTokenTtlSeconds * 1000);
    return jsonAnswer({ access_token: accessToken, expires_in: vertexTokenTtlSeconds, token_type: 'Bearer' }, 'application/json; charset=utf-8');
  },
};

const UNAUTHENTICATED = googleReply(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.', 'UNAUTHENTICATED');

function checkRequest(request: RecordedRequest) {
  const route = ROUTE.exec(request.path);
  request.cloud = { project: route?.[1], region: route?.[2], model: route ? decodeURIComponent(route[4] ?? '') : undefined, auth: 'bearer' };
  return tokenValid(bearerToken(request.headers)) ? undefined : UNAUTHENTICATED;
}

/** The route's publisher and model and method, for paths of Vertex's model routes. */
function routeOf(path: string): { publisher: string; model: string; method: string } | undefined {
  const route = path.includes('/publishers/') ? ROUTE.exec(path) : null;
  return route ? { publisher: route[3] ?? '', model: decodeURIComponent(route[4] ?? ''), method: route[5] ?? '' } : undefined;
}

/** Vertex's own errors, whatever the model behind the route. */
const PLATFORM_FAULTS: FaultReplies = {
  error401: () => UNAUTHENTICATED,
  error403: () => googleReply(403, `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${FAKE_VERTEX_PROJECT}/locations/global/publishers/google/models' (or it may not exist).`, 'PERMISSION_DENIED'),
  error429: () => googleReply(429, 'Resource exhausted. Please try again later.', 'RESOURCE_EXHAUSTED'),
  quotaExhausted: () => googleReply(429, 'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model. Please submit a quota increase request.', 'RESOURCE_EXHAUSTED'),
};

export const vertexGeminiProvider: FakeProvider = {
  ...geminiProvider,
  dialect: 'vertex',
  operation: (path) => (routeOf(path)?.publisher === 'google' ? geminiProvider.operation(path) : undefined),
  apiKey: bearerToken,
  checkRequest,
  faults: { ...geminiProvider.faults, ...PLATFORM_FAULTS },
};

/** rawPredict / streamRawPredict: the fake Anthropic behind Vertex's body rules. */
function rawPredict(model: string, stream: boolean): Operation {
  return (body, context) => {
    if ('model' in body) return errorAnswer(anthropicReply(400, 'invalid_request_error', 'model: Extra inputs are not permitted'));
    if (body.anthropic_version !== VERTEX_ANTHROPIC_VERSION) {
      return errorAnswer(anthropicReply(400, 'invalid_request_error', `anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`));
    }
    return anthropicMessages({ ...body, model, stream: stream || body.stream === true }, context);
  };
}

export const vertexAnthropicProvider: FakeProvider = {
  ...anthropicProvider,
  dialect: 'vertex',
  operation(path) {
    const route = routeOf(path);
    if (route?.publisher !== 'anthropic' || (route.method !== 'rawPredict' && route.method !== 'streamRawPredict')) return undefined;
    if (route.model === 'count-tokens') return countTokens;
    return rawPredict(route.model, route.method === 'streamRawPredict');
  },
  apiKey: bearerToken,
  checkRequest,
  faults: { ...anthropicProvider.faults, ...PLATFORM_FAULTS },
};
