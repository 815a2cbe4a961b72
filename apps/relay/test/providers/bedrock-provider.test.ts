// The AWS Bedrock provider (channel type 33, docs/api.md 2.12): where each model's calls go, the
// InvokeModel bodies of Anthropic's models, and how calls are authenticated (SigV4 or an API key).
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { ChatRequest } from '../../src/core/chat';
import { CredentialRefused, type ClientRequest, type UpstreamCall, type UpstreamTarget } from '../../src/core/provider';
import { bedrockProvider } from '../../src/providers/bedrock';

const ACCESS_KEY_ID = 'AKIAUNITTEST00000001';
const SECRET = 'unitTestSecretAccessKey/0000+0000000000';
const SESSION_TOKEN = 'UnitTestSessionToken//0000+session';
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const NOVA = 'amazon.nova-pro-v1:0';

const channel: UpstreamTarget = {
  id: 33,
  key: `${ACCESS_KEY_ID}|${SECRET}`,
  origin: 'https://bedrock-runtime.eu-west-3.amazonaws.com',
  pathPrefix: '',
  settings: { region: 'eu-west-3' },
};

/** A client's body as a pass-through hands it over. */
function clientRequest(json: Record<string, unknown>, anthropicBeta?: string): ClientRequest {
  return { json, stream: json.stream === true, bodyFor: (model) => JSON.stringify({ ...json, model }), ...(anthropicBeta ? { anthropicBeta } : {}) };
}

const CHAT: ChatRequest = {
  model: 'claude',
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  maxTokens: 100,
  stream: false,
};

const SIGNATURE = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/**
 * Signs the call again as AWS checks it (the pure-JS SHA-256, the path as sent encoded once more,
 * the signed headers only, the date the call carries): the signature must be the same.
 */
async function expectVerifiable(call: UpstreamCall, secret: string): Promise<{ keyId: string; region: string; service: string; signedHeaders: string }> {
  const parts = SIGNATURE.exec(call.headers.authorization ?? '');
  if (!parts) throw new Error(`not a SigV4 authorization: ${call.headers.authorization}`);
  const [, keyId, , region, service, signedHeaders] = parts as unknown as [string, string, string, string, string, string];
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) {
    if (name !== 'x-amz-date' && name !== 'x-amz-security-token' && name !== 'x-amz-content-sha256') headers[name] = call.headers[name] ?? '';
  }
  const amzDate = call.headers['x-amz-date'] ?? '';
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const signer = new SignatureV4({
    service,
    region,
    credentials: { accessKeyId: keyId, secretAccessKey: secret, sessionToken: call.headers['x-amz-security-token'] },
    sha256: Sha256,
  });
  const resigned = await signer.sign(new HttpRequest({ method: 'POST', hostname: 'ignored', path: call.path, headers, body: call.body }), { signingDate });
  expect(resigned.headers.authorization).toBe(call.headers.authorization);
  return { keyId, region, service, signedHeaders };
}

describe('bedrockProvider routes', () => {
  it('passes /v1/messages to InvokeModel on Anthropic models, the model id percent-encoded in the path', () => {
    const call = bedrockProvider.native('messages', channel, CLAUDE)?.(clientRequest({ model: 'claude', max_tokens: 10, messages: [] }));
    expect(call?.path).toBe('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
    expect(call?.framing).toBeUndefined();
    const stream = bedrockProvider.native('messages', { ...channel, pathPrefix: '/proxy' }, 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-1-v1:0')?.(
      clientRequest({ model: 'claude', stream: true, max_tokens: 10, messages: [] }),
    );
    expect(stream?.path).toBe('/proxy/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-opus-4-1-v1%3A0/invoke-with-response-stream');
    expect(stream?.framing).toEqual(expect.any(Function));
  });

  it("sends the client's Messages body without model and stream, with Bedrock's anthropic_version and the client's betas Bedrock knows", () => {
    const thinking = { type: 'thinking', thinking: 'Let me see.', signature: 'EqQBCkYIBxgCKkDsig==' };
    const json = { model: 'claude', stream: true, max_tokens: 10, metadata: { user_id: 'u1' }, messages: [{ role: 'assistant', content: [thinking] }] };
    const call = bedrockProvider.native('messages', channel, CLAUDE)?.(clientRequest(json, 'claude-code-20250219, context-1m-2025-08-07, interleaved-thinking-2025-05-14,mcp-servers-2025-12-04'));
    expect(JSON.parse(String(call?.body))).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 10,
      metadata: { user_id: 'u1' },
      messages: [{ role: 'assistant', content: [thinking] }],
      anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'],
    });
    expect(call?.headers).toEqual({ 'content-type': 'application/json' });
  });

  it.each(['chat', 'responses', 'count_tokens', 'embeddings', 'completions', 'gemini'] as const)('has no native %s on Anthropic models', (operation) => {
    expect(bedrockProvider.native(operation, channel, CLAUDE)).toBeUndefined();
  });

  it('has no native operation on the other models: they are translated through Converse', () => {
    expect(bedrockProvider.native('messages', channel, NOVA)).toBeUndefined();
    const call = bedrockProvider.chat(channel, NOVA).request({ ...CHAT, stream: true });
    expect(call.path).toBe('/model/amazon.nova-pro-v1%3A0/converse-stream');
    expect(call.framing).toEqual(expect.any(Function));
    expect(bedrockProvider.chat(channel, NOVA).request(CHAT).path).toBe('/model/amazon.nova-pro-v1%3A0/converse');
  });

  it("writes chat on an Anthropic model as the Anthropic provider's Messages body, edited for InvokeModel", () => {
    const call = bedrockProvider.chat(channel, CLAUDE).request({ ...CHAT, stream: true });
    expect(call.path).toBe('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
    expect(JSON.parse(String(call.body))).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
  });

  it('serves chat, messages and responses for every model, and has no embeddings', () => {
    expect(bedrockProvider.facts.surfaces).toEqual(['chat', 'messages', 'responses']);
    expect(bedrockProvider.surfacesFor).toBeUndefined();
    expect(bedrockProvider.embeddings).toBeUndefined();
  });
});

describe('bedrockProvider.authorize', () => {
  const authorize = (target: UpstreamTarget, call: UpstreamCall) => bedrockProvider.authorize!(target, call);

  it('signs with SigV4 for the bedrock service and the channel region, over the host of its address, path and body', async () => {
    const call = bedrockProvider.native('messages', channel, CLAUDE)!(clientRequest({ model: 'claude', max_tokens: 10, messages: [] }));
    await authorize(channel, call);
    expect(Object.keys(call.headers).sort()).toEqual(['authorization', 'content-type', 'host', 'x-amz-content-sha256', 'x-amz-date']);
    expect(call.headers.host).toBe('bedrock-runtime.eu-west-3.amazonaws.com');
    expect(await expectVerifiable(call, SECRET)).toEqual({
      keyId: ACCESS_KEY_ID,
      region: 'eu-west-3',
      service: 'bedrock',
      signedHeaders: 'content-type;host;x-amz-content-sha256;x-amz-date',
    });
    expect(Math.abs(Date.now() - Date.parse(call.headers['x-amz-date']!.replace(/(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z/, '$1-$2-$3T$4:$5:$6Z')))).toBeLessThan(5_000);
  });

  it('signs the port of a local address, and a body that is a Buffer', async () => {
    const local = { ...channel, id: 34, origin: 'http://127.0.0.1:4010' };
    const call = { path: '/model/amazon.nova-lite-v1%3A0/converse', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"messages":[]}') };
    await authorize(local, call);
    expect(call.headers).toMatchObject({ host: '127.0.0.1:4010' });
    await expectVerifiable(call, SECRET);
  });

  it('adds and signs the session token of temporary credentials', async () => {
    const temporary = { ...channel, id: 35, key: `${ACCESS_KEY_ID}|${SECRET}|${SESSION_TOKEN}` };
    const call = bedrockProvider.chat(temporary, NOVA).request(CHAT);
    await authorize(temporary, call);
    expect(call.headers['x-amz-security-token']).toBe(SESSION_TOKEN);
    const { signedHeaders } = await expectVerifiable(call, SECRET);
    expect(signedHeaders.split(';')).toContain('x-amz-security-token');
  });

  it('sends a Bedrock API key as a bearer token, unsigned', async () => {
    const apiKey = { ...channel, id: 36, key: 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl', settings: {} };
    const call = bedrockProvider.chat(apiKey, NOVA).request(CHAT);
    await authorize(apiKey, call);
    expect(call.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl' });
  });

  it('uses a rotated key and a moved region at once (the cached signer is per key, region and address)', async () => {
    const first = bedrockProvider.chat(channel, NOVA).request(CHAT);
    await authorize(channel, first);
    const rotated = { ...channel, key: `AKIAUNITTEST00000002|${SECRET}`, settings: { region: 'us-west-2' } };
    const second = bedrockProvider.chat(rotated, NOVA).request(CHAT);
    await authorize(rotated, second);
    expect(await expectVerifiable(second, SECRET)).toMatchObject({ keyId: 'AKIAUNITTEST00000002', region: 'us-west-2' });
  });

  it.each([
    ['a malformed key', { key: `${ACCESS_KEY_ID}|${SECRET}|${SESSION_TOKEN}|extra` }],
    ['AWS credentials without a region', { key: `${ACCESS_KEY_ID}|${SECRET}`, settings: {} }],
  ])('refuses %s as a channel failure, naming no secret', async (_name, fields) => {
    const target = { ...channel, id: 37, ...fields };
    const failure = await authorize(target, bedrockProvider.chat(target, NOVA).request(CHAT)).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(CredentialRefused);
    for (const secret of [ACCESS_KEY_ID, SECRET, SESSION_TOKEN]) expect((failure as Error).message).not.toContain(secret);
  });
});
