// The Vertex AI provider (channel type 41, docs/api.md 2.12): Gemini and Claude model routes, their
// bodies, the surfaces each model serves, the access token on every call and both error shapes.
import { generateKeyPairSync } from 'node:crypto';
import type { ChatRequest } from '../../src/core/chat';
import type { ClientRequest, UpstreamCall, UpstreamTarget } from '../../src/core/provider';
import { CredentialRefused } from '../../src/core/provider';
import { type AccessToken, AccessTokens } from '../../src/providers/vertex/access-tokens';
import { createVertexProvider, vertexProvider } from '../../src/providers/vertex';
import { thrownBy } from '../thrown';

const PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'key-project',
  private_key_id: 'kid',
  private_key: PEM,
  client_email: 'relay@key-project.iam.gserviceaccount.com',
  token_uri: 'https://oauth2.googleapis.com/token',
});

const channel: UpstreamTarget = { id: 41, key: KEY, origin: 'https://aiplatform.googleapis.com', pathPrefix: '', settings: {} };
const regional: UpstreamTarget = {
  ...channel,
  origin: 'https://europe-west4-aiplatform.googleapis.com',
  pathPrefix: '/proxy',
  settings: { region: 'europe-west4', project_id: 'other-project' },
};

const GLOBAL_MODELS = '/v1/projects/key-project/locations/global/publishers';
const CLAUDE = 'claude-sonnet-4@20250514';
const GEMINI = 'gemini-2.5-flash';

function clientRequest(raw: string, extra: Partial<ClientRequest> = {}): ClientRequest {
  const json = JSON.parse(raw) as Record<string, unknown>;
  return { json, stream: json.stream === true, bodyFor: () => Buffer.from(raw), ...extra };
}

const CHAT: ChatRequest = { model: 'm', system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false };

/** A provider whose token exchange is a counter. */
function withTokens() {
  const exchange: jest.Mock<Promise<AccessToken>> = jest.fn(async () => ({ token: `tok-${exchange.mock.calls.length}`, expiresInSeconds: 3600 }));
  return { provider: createVertexProvider(new AccessTokens(exchange)), exchange };
}

const bodyOf = (call: UpstreamCall | undefined) => JSON.parse(String(call?.body)) as Record<string, unknown>;

describe('Gemini models', () => {
  it.each([
    [false, `${GLOBAL_MODELS}/google/models/${GEMINI}:generateContent`],
    [true, `${GLOBAL_MODELS}/google/models/${GEMINI}:streamGenerateContent?alt=sse`],
  ])('pass generateContent through (stream %s) to %s, the client bytes untouched', (stream, path) => {
    const raw = '{ "contents" : [{"role":"user","parts":[{"text":"caf\\u00e9"}]}] }';
    const client = { ...clientRequest(raw), stream };
    const call = vertexProvider.native('gemini', channel, GEMINI)?.(client);
    expect(call?.path).toBe(path);
    expect(call?.headers).toEqual({ 'content-type': 'application/json' });
    expect(Buffer.isBuffer(call?.body) && call.body.toString()).toBe(raw);
  });

  it("use the channel's region, project and path prefix", () => {
    const call = vertexProvider.native('gemini', regional, GEMINI)?.(clientRequest('{}'));
    expect(call?.path).toBe(`/proxy/v1/projects/other-project/locations/europe-west4/publishers/google/models/${GEMINI}:generateContent`);
  });

  it('translate chat with the Gemini body', () => {
    const call = vertexProvider.chat(channel, GEMINI).request({ ...CHAT, stream: true, maxTokens: 50 });
    expect(call.path).toBe(`${GLOBAL_MODELS}/google/models/${GEMINI}:streamGenerateContent?alt=sse`);
    expect(bodyOf(call)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 50 },
    });
  });

  it('translate image generation with the Gemini image body', () => {
    const call = vertexProvider.images?.request(channel, 'gemini-2.5-flash-image', { prompt: 'a fox', n: 1, size: '1536x1024' });
    expect(call?.path).toBe(`${GLOBAL_MODELS}/google/models/gemini-2.5-flash-image:generateContent`);
    expect(bodyOf(call)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a fox' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '3:2' } },
    });
  });

  it('serve every surface of the type, only generateContent natively', () => {
    expect(vertexProvider.surfacesFor?.(channel, GEMINI)).toEqual(['gemini', 'chat', 'messages', 'responses', 'images']);
    for (const operation of ['chat', 'messages', 'responses', 'images', 'completions', 'embeddings', 'count_tokens'] as const) {
      expect(vertexProvider.native(operation, channel, GEMINI)).toBeUndefined();
    }
  });
});

describe('Claude models', () => {
  it.each([
    [false, 'rawPredict'],
    [true, 'streamRawPredict'],
  ])('pass Messages through (stream %s) to :%s with the Vertex version in the body and no model', (stream, method) => {
    const raw = JSON.stringify({ model: 'claude-sonnet-4', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });
    const call = vertexProvider.native('messages', channel, CLAUDE)?.(clientRequest(raw, { anthropicVersion: '2023-06-01', anthropicBeta: 'interleaved-thinking-2025-05-14' }));
    expect(call?.path).toBe(`${GLOBAL_MODELS}/anthropic/models/${CLAUDE}:${method}`);
    expect(call?.headers).toEqual({ 'content-type': 'application/json', 'anthropic-beta': 'interleaved-thinking-2025-05-14' });
    expect(bodyOf(call)).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      ...(stream ? { stream: true } : {}),
    });
  });

  it('keep a signed thinking block of the client byte for byte', () => {
    const thinking = '{"type":"thinking","thinking":"Let me think.","signature":"EqQBCkYIARgCKkD+/=="}';
    const raw = `{"model":"claude-sonnet-4","max_tokens":10,"messages":[{"role":"assistant","content":[${thinking}]}]}`;
    const call = vertexProvider.native('messages', channel, CLAUDE)?.(clientRequest(raw));
    expect(String(call?.body)).toContain(thinking);
    expect(call?.headers['anthropic-beta']).toBeUndefined();
  });

  it.each([
    [false, 'rawPredict'],
    [true, 'streamRawPredict'],
  ])('translate chat (stream %s) through :%s with the Anthropic body', (stream, method) => {
    const call = vertexProvider.chat(regional, CLAUDE).request({ ...CHAT, stream, maxTokens: 20 });
    expect(call.path).toBe(`/proxy/v1/projects/other-project/locations/europe-west4/publishers/anthropic/models/${CLAUDE}:${method}`);
    expect(bodyOf(call)).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 20,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      ...(stream ? { stream: true } : {}),
    });
  });

  it('read Anthropic answers', () => {
    const wire = vertexProvider.chat(channel, CLAUDE);
    const answer = wire.response({ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hello' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } });
    expect(answer.choices[0]?.content).toEqual([{ type: 'text', text: 'hello' }]);
    const decoded = wire.stream().decode({ raw: '', event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}' });
    expect(decoded).toEqual([expect.objectContaining({ type: 'text', text: 'hi' })]);
  });

  it('serve chat, messages and responses, never generateContent', () => {
    expect(vertexProvider.surfacesFor?.(channel, CLAUDE)).toEqual(['chat', 'messages', 'responses']);
    for (const operation of ['gemini', 'chat', 'responses', 'count_tokens'] as const) expect(vertexProvider.native(operation, channel, CLAUDE)).toBeUndefined();
  });
});

describe('addressing failures', () => {
  it("refuse a channel with no project anywhere (a channel failure, not the client's)", () => {
    const { project_id: _, ...rest } = JSON.parse(KEY) as Record<string, unknown>;
    const refusal = thrownBy(() => vertexProvider.chat({ ...channel, id: 42, key: JSON.stringify(rest) }, GEMINI).request(CHAT));
    expect(refusal).toBeInstanceOf(CredentialRefused);
    expect((refusal as Error).message).toContain('settings.project_id');
  });

  it('refuse an unusable key file before any request', () => {
    expect(thrownBy(() => vertexProvider.native('gemini', { ...channel, id: 43, key: 'nope' }, GEMINI)?.(clientRequest('{}')))).toBeInstanceOf(CredentialRefused);
  });
});

describe('authorize', () => {
  it('sets the bearer token of one exchange per channel, again after a 401 dropped it', async () => {
    const { provider, exchange } = withTokens();
    const calls = Array.from({ length: 5 }, () => provider.chat(channel, GEMINI).request(CHAT));
    const authorize = provider.authorize!.bind(provider);
    await Promise.all(calls.map((call) => authorize(channel, call)));
    expect(calls.map((call) => call.headers.authorization)).toEqual(Array(5).fill('Bearer tok-1'));
    expect(exchange).toHaveBeenCalledTimes(1);

    expect(provider.credentialRejected?.(channel, calls[0]!)).toBe(true);
    const next = provider.chat(channel, CLAUDE).request(CHAT);
    await authorize(channel, next);
    expect(next.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer tok-2' });
  });
});

describe('errors', () => {
  const google = (status: number, message: string, code: string) => Buffer.from(JSON.stringify({ error: { code: status, message, status: code } }));
  const anthropic = (type: string, message: string) => Buffer.from(JSON.stringify({ type: 'error', error: { type, message } }));

  it("reads Google's shape (front and Gemini models) and Anthropic's (Claude models)", () => {
    expect(vertexProvider.errorOf(google(401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED'), {})).toEqual({
      message: 'Request had invalid authentication credentials.',
      status: 'UNAUTHENTICATED',
      code: 'UNAUTHENTICATED',
      type: 'authentication_error',
    });
    expect(vertexProvider.errorOf(anthropic('overloaded_error', 'Overloaded'), {})).toEqual({ message: 'Overloaded', code: 'overloaded_error', anthropicType: 'overloaded_error', type: 'server_error' });
    expect(vertexProvider.errorOf(Buffer.from('<html>'), {})).toBeUndefined();
  });

  it('disables on 401 / 403 and an exhausted balance of either shape, not on rate limits', () => {
    const reason = (status: number, body: Buffer) => vertexProvider.disablingReason(status, vertexProvider.errorOf(body, {}));
    expect(reason(401, google(401, 'x', 'UNAUTHENTICATED'))).toBe('upstream answered 401');
    expect(reason(403, google(403, 'x', 'PERMISSION_DENIED'))).toBe('upstream answered 403');
    expect(reason(400, anthropic('invalid_request_error', 'Your credit balance is too low to access the Anthropic API.'))).toBe('upstream quota exhausted');
    expect(reason(429, google(429, 'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute', 'RESOURCE_EXHAUSTED'))).toBeUndefined();
    expect(reason(429, anthropic('rate_limit_error', 'slow down'))).toBeUndefined();
  });
});
