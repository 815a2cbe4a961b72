// The fake cloud providers (Azure OpenAI, AWS Bedrock, Google Vertex AI), driven by the official
// clients: if a client cannot authenticate against a fake or parse what it answers, the relay's
// tests built on that fake prove nothing about the real provider.
import { generateKeyPairSync, sign } from 'node:crypto';
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import AnthropicVertex from '@anthropic-ai/vertex-sdk';
import { Sha256 } from '@aws-crypto/sha256-js';
import {
  BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  ConverseCommand,
  type ConverseStreamOutput,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ModelStreamErrorException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI, type GoogleGenAIOptions } from '@google/genai';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import OpenAI, { AzureOpenAI } from 'openai';
import {
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  FAKE_AWS_SESSION_ACCESS_KEY_ID,
  FAKE_AWS_SESSION_TOKEN,
  FAKE_BEDROCK_API_KEY,
  FAKE_TEXT_PIECE,
  FAKE_THOUGHT,
  FAKE_TOOL_ARGUMENTS,
  FAKE_VERTEX_PROJECT,
  fakeEmbedding,
  type FakeMode,
  type FakeUpstream,
  fakeVertexServiceAccount,
  startFakeUpstream,
  VERTEX_TOKEN_PATH,
} from '../src/fake-upstream';

const KEY = 'azure-fake-resource-key';
const TEXT = FAKE_TEXT_PIECE.repeat(5);
const CLAUDE_PROFILE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const NOVA = 'amazon.nova-pro-v1:0';
const WEATHER_SPEC = { name: 'get_weather', description: 'Weather of a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } };
const TIME_SPEC = { ...WEATHER_SPEC, name: 'get_time', description: 'Time in a city' };

let fake: FakeUpstream;
beforeEach(async () => {
  fake = await startFakeUpstream();
});
afterEach(() => fake.close());

const mode = (fakeMode: FakeMode) => ({ headers: { 'x-fake-mode': fakeMode } });
const pieces = (text: string) => text.split(FAKE_TEXT_PIECE).length - 1;

describe('Azure OpenAI (openai AzureOpenAI)', () => {
  const azure = (deployment = 'gpt-4o-prod') => new AzureOpenAI({ endpoint: fake.url, apiKey: KEY, apiVersion: '2024-10-21', deployment, maxRetries: 0 });

  it('answers a chat on the deployment route with Azure content filter results, keyed by api-key', async () => {
    const completion = await azure().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'one two three' }] });
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: TEXT } });
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5 });
    const extra = completion as unknown as { prompt_filter_results: unknown[]; choices: { content_filter_results: unknown }[] };
    expect(extra.prompt_filter_results[0]).toMatchObject({ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } });
    expect(extra.choices[0]?.content_filter_results).toMatchObject({ violence: { filtered: false } });
    const [request] = fake.requests;
    expect(request).toMatchObject({ dialect: 'azure', path: '/openai/deployments/gpt-4o-prod/chat/completions', cloud: { model: 'gpt-4o-prod', auth: 'api-key' } });
    expect(request?.url).toContain('api-version=2024-10-21');
    expect(request?.headers['api-key']).toBe(KEY);
  });

  it('streams a chat that starts with the prompt filter chunk', async () => {
    const stream = await azure().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]).toMatchObject({ choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(TEXT);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('answers completions and embeddings on their deployment routes, the deployment as model when the body names none', async () => {
    const completion = await azure('instruct').completions.create({ model: 'gpt-35-turbo-instruct', prompt: 'one two', max_tokens: 3 });
    expect(completion.choices[0]?.text).toBe(FAKE_TEXT_PIECE.repeat(3));
    const embeddings = await azure('embedder').embeddings.create({ model: 'text-embedding-3-small', input: ['first text'], encoding_format: 'float' });
    expect(embeddings.data[0]?.embedding).toEqual(fakeEmbedding('first text', 8));
    expect(fake.requests.map((request) => request.path)).toEqual(['/openai/deployments/instruct/completions', '/openai/deployments/embedder/embeddings']);

    const raw = await fetch(`${fake.url}/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21`, {
      method: 'POST',
      headers: { 'api-key': KEY },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await raw.json()).toMatchObject({ model: 'gpt-4o-prod' });
  });

  it('answers /openai/v1/responses with the model of the body', async () => {
    const v1 = new AzureOpenAI({ baseURL: `${fake.url}/openai/v1`, apiKey: KEY, apiVersion: 'preview', maxRetries: 0 });
    const response = await v1.responses.create({ model: 'gpt-5-deployment', input: 'one two' });
    expect(response).toMatchObject({ model: 'gpt-5-deployment', output_text: TEXT, usage: { input_tokens: 2, output_tokens: 5 } });
    expect(fake.requests[0]).toMatchObject({ dialect: 'azure', path: '/openai/v1/responses', cloud: { model: 'gpt-5-deployment', auth: 'api-key' } });
  });

  it('refuses a call without api-key (401) or api-version (400) in Azure shape', async () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    const keyless = await fetch(`${fake.url}/openai/deployments/d/chat/completions?api-version=2024-10-21`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body });
    expect(keyless.status).toBe(401);
    expect(await keyless.json()).toEqual({ error: { code: '401', message: expect.stringContaining('Access denied due to invalid subscription key') } });
    const versionless = await fetch(`${fake.url}/openai/deployments/d/chat/completions`, { method: 'POST', headers: { 'api-key': KEY }, body });
    expect(versionless.status).toBe(400);
    expect(await versionless.json()).toMatchObject({ error: { code: 'MissingApiVersionParameter' } });
  });

  it('refuses a filtered prompt with the content_filter error (contentFilter), streams included', async () => {
    const failure = await azure().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }, mode('contentFilter')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({
      status: 400,
      code: 'content_filter',
      param: 'prompt',
      error: { innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { violence: { filtered: true } } } },
    });
  });

  it.each([
    ['error401', OpenAI.AuthenticationError, 401],
    ['error429', OpenAI.RateLimitError, 429],
    ['overloaded', OpenAI.InternalServerError, 503],
  ] as const)('%s is an %p with status %d', async (fakeMode, errorClass, status) => {
    const failure = await azure().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, mode(fakeMode)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errorClass);
    expect(failure).toMatchObject({ status });
  });
});

type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
const longTermCredentials: Credentials = { accessKeyId: FAKE_AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY };
const sessionCredentials: Credentials = { accessKeyId: FAKE_AWS_SESSION_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY, sessionToken: FAKE_AWS_SESSION_TOKEN };
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The complete event-stream frames in `bytes`, chunk payloads decoded to their JSON text. */
function framesIn(bytes: Buffer): { headers: Record<string, unknown>; text: string }[] {
  const frames = [];
  for (let at = 0; at + 4 <= bytes.length && at + bytes.readUInt32BE(at) <= bytes.length; at += bytes.readUInt32BE(at)) {
    const message = codec.decode(bytes.subarray(at, at + bytes.readUInt32BE(at)));
    const headers = Object.fromEntries(Object.entries(message.headers).map(([name, header]) => [name, header.value]));
    const payload = toUtf8(message.body);
    const chunk = (JSON.parse(payload) as { bytes?: string }).bytes;
    frames.push({ headers, text: chunk === undefined ? payload : Buffer.from(chunk, 'base64').toString() });
  }
  return frames;
}

describe('AWS Bedrock (@aws-sdk/client-bedrock-runtime)', () => {
  const bedrock = (credentials = longTermCredentials) => new BedrockRuntimeClient({
    region: 'eu-west-3',
    endpoint: fake.url,
    credentials,
    // The default handler speaks HTTP/2, which the fake does not.
    requestHandler: new NodeHttpHandler(),
    maxAttempts: 1,
  });

  it('answers Converse with text and usage, signed with SigV4 (the region recorded from the credential scope)', async () => {
    fake.setMode('ok', { cachedTokens: 40, cacheWriteTokens: 7 });
    const response = await bedrock().send(new ConverseCommand({
      modelId: NOVA,
      system: [{ text: 'Be brief' }],
      messages: [{ role: 'user', content: [{ text: 'one two three' }, { image: { format: 'png', source: { bytes: new Uint8Array([1, 2, 3]) } } }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2 },
    }));
    expect(response.output?.message).toEqual({ role: 'assistant', content: [{ text: TEXT }] });
    expect(response.stopReason).toBe('end_turn');
    // 2 + 3 words + 258 for the image; cache tokens outside inputTokens, inside totalTokens
    expect(response.usage).toEqual({ inputTokens: 263, outputTokens: 5, totalTokens: 315, cacheReadInputTokens: 40, cacheWriteInputTokens: 7 });
    expect(response.metrics?.latencyMs).toEqual(expect.any(Number));
    expect(fake.requests[0]).toMatchObject({
      dialect: 'bedrock',
      path: '/model/amazon.nova-pro-v1%3A0/converse',
      cloud: { model: NOVA, region: 'eu-west-3', auth: 'sigv4' },
    });
  });

  it('calls the offered tool with Converse, then answers text after the toolResult; maxTokens caps the text', async () => {
    const toolConfig = { tools: [{ toolSpec: WEATHER_SPEC }, { toolSpec: TIME_SPEC }], toolChoice: { tool: { name: 'get_time' } } };
    const call = await bedrock().send(new ConverseCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'time?' }] }], toolConfig }));
    expect(call.stopReason).toBe('tool_use');
    expect(call.output?.message?.content).toEqual([{ toolUse: { toolUseId: 'tooluse_fake1', name: 'get_time', input: FAKE_TOOL_ARGUMENTS } }]);
    expect(call.usage?.outputTokens).toBe(10);

    const answer = await bedrock().send(new ConverseCommand({
      modelId: NOVA,
      messages: [
        { role: 'user', content: [{ text: 'time?' }] },
        { role: 'assistant', content: call.output?.message?.content },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_fake1', content: [{ text: 'noon' }] } }] },
      ],
      toolConfig,
      inferenceConfig: { maxTokens: 2 },
    }));
    expect(answer.stopReason).toBe('max_tokens');
    expect(answer.output?.message?.content).toEqual([{ text: FAKE_TEXT_PIECE.repeat(2) }]);
    // "time?" + the tool input's JSON (1 word) + "noon"
    expect(answer.usage?.inputTokens).toBe(3);
  });

  it('streams ConverseStream events: reasoning with its signature, then text, stop and metadata', async () => {
    const response = await bedrock().send(new ConverseStreamCommand({
      modelId: CLAUDE_PROFILE,
      messages: [{ role: 'user', content: [{ text: 'one two' }] }],
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } },
    }));
    const events: ConverseStreamOutput[] = [];
    for await (const event of response.stream ?? []) events.push(event);
    expect(events[0]).toEqual({ messageStart: { role: 'assistant' } });
    const deltas = events.flatMap((event) => (event.contentBlockDelta ? [event.contentBlockDelta] : []));
    expect(deltas.filter((delta) => delta.contentBlockIndex === 0).map((delta) => delta.delta?.reasoningContent)).toEqual([{ text: FAKE_THOUGHT }, { signature: 'sig-fake-1' }]);
    expect(deltas.filter((delta) => delta.contentBlockIndex === 1).map((delta) => delta.delta?.text).join('')).toBe(TEXT);
    expect(events.filter((event) => event.contentBlockStop).map((event) => event.contentBlockStop?.contentBlockIndex)).toEqual([0, 1]);
    expect(events.at(-2)).toEqual({ messageStop: { stopReason: 'end_turn' } });
    expect(events.at(-1)?.metadata).toMatchObject({ usage: { inputTokens: 2, outputTokens: 8, totalTokens: 10 }, metrics: { latencyMs: expect.any(Number) } });
    expect(fake.requests[0]?.path).toBe('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
  });

  it('streams a ConverseStream tool use: contentBlockStart, then the input in two pieces', async () => {
    const response = await bedrock().send(new ConverseStreamCommand({
      modelId: NOVA,
      messages: [{ role: 'user', content: [{ text: 'weather?' }] }],
      toolConfig: { tools: [{ toolSpec: WEATHER_SPEC }] },
    }));
    const events: ConverseStreamOutput[] = [];
    for await (const event of response.stream ?? []) events.push(event);
    expect(events.find((event) => event.contentBlockStart)?.contentBlockStart).toEqual({ contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_fake1', name: 'get_weather' } } });
    const input = events.flatMap((event) => (event.contentBlockDelta?.delta?.toolUse ? [event.contentBlockDelta.delta.toolUse.input] : []));
    expect(input).toHaveLength(2);
    expect(JSON.parse(input.join(''))).toEqual(FAKE_TOOL_ARGUMENTS);
    expect(events.find((event) => event.messageStop)?.messageStop?.stopReason).toBe('tool_use');
  });

  it('answers InvokeModel with the Anthropic message, the model id percent-encoded in the path', async () => {
    const response = await bedrock(sessionCredentials).send(new InvokeModelCommand({
      modelId: CLAUDE_PROFILE,
      contentType: 'application/json',
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'one two' }] }),
    }));
    const message = JSON.parse(toUtf8(response.body)) as Record<string, unknown>;
    expect(message).toMatchObject({ type: 'message', model: CLAUDE_PROFILE, content: [{ type: 'text', text: TEXT }], usage: { input_tokens: 2, output_tokens: 5 } });
    expect(fake.requests[0]).toMatchObject({ path: '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke', cloud: { auth: 'sigv4', region: 'eu-west-3' } });
    expect(fake.requests[0]?.headers['x-amz-security-token']).toBe(FAKE_AWS_SESSION_TOKEN);
  });

  it('streams InvokeModelWithResponseStream as chunks of Anthropic events, invocation metrics on message_stop', async () => {
    const response = await bedrock().send(new InvokeModelWithResponseStreamCommand({
      modelId: CLAUDE_PROFILE,
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'one two three' }] }),
    }));
    expect(response.contentType).toBe('application/json');
    const events: { type: string; [field: string]: unknown }[] = [];
    for await (const part of response.body ?? []) if (part.chunk?.bytes) events.push(JSON.parse(toUtf8(part.chunk.bytes)) as { type: string });
    expect(events[0]?.type).toBe('message_start');
    expect(events.at(-1)).toEqual({
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': { inputTokenCount: 3, outputTokenCount: 5, invocationLatency: expect.any(Number), firstByteLatency: expect.any(Number) },
    });
    const text = events.map((event) => ((event.delta as { text?: string } | undefined)?.text ?? '')).join('');
    expect(text).toBe(TEXT);
  });

  it('refuses an InvokeModel body with model or stream, or without anthropic_version (ValidationException)', async () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    for (const wrong of [{ ...body, model: 'claude' }, { ...body, stream: true }, { ...body, anthropic_version: undefined }]) {
      const failure = await bedrock().send(new InvokeModelCommand({ modelId: CLAUDE_PROFILE, body: JSON.stringify(wrong) })).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ValidationException);
      expect(failure).toMatchObject({ $metadata: { httpStatusCode: 400 }, message: expect.stringContaining('Malformed input request') });
    }
  });

  it('maps error modes to the SDK exception classes (ThrottlingException for error429)', async () => {
    fake.setMode('error429');
    const failure = await bedrock().send(new ConverseCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] })).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ThrottlingException);
    expect(failure).toMatchObject({ $metadata: { httpStatusCode: 429 } });
  });

  it('ends a ConverseStream with the modelStreamErrorException frame after two pieces (errorMidStream)', async () => {
    fake.setMode('errorMidStream');
    const response = await bedrock().send(new ConverseStreamCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    const received: string[] = [];
    const failure = await (async () => {
      for await (const event of response.stream ?? []) received.push(event.contentBlockDelta?.delta?.text ?? '');
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ModelStreamErrorException);
    expect(received.join('')).toBe(FAKE_TEXT_PIECE.repeat(2));
  });

  it('sends a frame with a broken CRC in malformedSse, which the SDK refuses', async () => {
    fake.setMode('malformedSse');
    const response = await bedrock().send(new ConverseStreamCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    const failure = await (async () => {
      for await (const event of response.stream ?? []) expect(event).toBeDefined();
    })().catch((e: unknown) => e);
    expect(String(failure)).toMatch(/checksum/i);
  });

  it('refuses an unknown key, a missing session token and a wrong secret', async () => {
    const converse = (credentials: Credentials) =>
      bedrock(credentials).send(new ConverseCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] })).catch((e: unknown) => e);
    const names = async (credentials: Credentials) => {
      const failure = await converse(credentials);
      expect(failure).toBeInstanceOf(BedrockRuntimeServiceException);
      return [(failure as BedrockRuntimeServiceException).name, (failure as BedrockRuntimeServiceException).$metadata.httpStatusCode];
    };
    expect(await names({ ...longTermCredentials, accessKeyId: 'AKIAUNKNOWN000000000' })).toEqual(['UnrecognizedClientException', 403]);
    expect(await names({ ...sessionCredentials, sessionToken: undefined })).toEqual(['UnrecognizedClientException', 403]);
    expect(await names({ ...longTermCredentials, secretAccessKey: 'wrong' })).toEqual(['InvalidSignatureException', 403]);
  });
});

describe('AWS Bedrock SigV4 as other signers send it', () => {
  async function signedFetch(body: string, applyChecksum: boolean, tamper = false): Promise<Response> {
    const url = new URL(`${fake.url}/model/${encodeURIComponent(NOVA)}/converse`);
    const signer = new SignatureV4({ service: 'bedrock', region: 'ap-south-1', credentials: longTermCredentials, sha256: Sha256, applyChecksum });
    const signed = await signer.sign(new HttpRequest({
      method: 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      headers: { host: url.host, 'content-type': 'application/json' },
      body,
    }));
    return fetch(url, { method: 'POST', headers: signed.headers, body: tamper ? body.replace('hi', 'ho') : body });
  }
  const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] });

  it('accepts a signature without x-amz-content-sha256, and refuses a body changed after signing', async () => {
    expect((await signedFetch(body, false)).status).toBe(200);
    expect((await signedFetch(body, true)).status).toBe(200);
    const tampered = await signedFetch(body, true, true);
    expect(tampered.status).toBe(403);
    expect(tampered.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException:/);
    expect(await tampered.json()).toEqual({ message: expect.stringContaining('The request signature we calculated does not match') });
    expect(fake.requests[0]?.cloud).toEqual({ model: NOVA, region: 'ap-south-1', auth: 'sigv4' });
  });
});

describe('AWS Bedrock (@anthropic-ai/bedrock-sdk)', () => {
  // The SDK copies its `anthropic-version` header into the body unless told Bedrock's version.
  const bedrockVersion = { 'anthropic-version': 'bedrock-2023-05-31' };
  const options = () => ({ awsRegion: 'us-west-2', baseURL: fake.url, defaultHeaders: bedrockVersion, maxRetries: 0 });
  const signing = () => new AnthropicBedrock({ ...options(), awsAccessKey: FAKE_AWS_ACCESS_KEY_ID, awsSecretKey: FAKE_AWS_SECRET_ACCESS_KEY });
  const keyed = (apiKey: string) => new AnthropicBedrock({ ...options(), apiKey });
  const thinking = { type: 'enabled' as const, budget_tokens: 1024 };

  it('creates a message with thinking and its signature, signed with SigV4', async () => {
    const message = await signing().messages.create({ model: CLAUDE_PROFILE, max_tokens: 2000, thinking, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([
      { type: 'thinking', thinking: FAKE_THOUGHT, signature: 'sig-fake-1' },
      { type: 'text', text: TEXT },
    ]);
    const [request] = fake.requests;
    // This SDK leaves the `:` of the model id unescaped in the path.
    expect(request).toMatchObject({ path: `/model/${CLAUDE_PROFILE}/invoke`, cloud: { model: CLAUDE_PROFILE, region: 'us-west-2', auth: 'sigv4' } });
    expect(request?.json).toMatchObject({ anthropic_version: 'bedrock-2023-05-31' });
    expect(request?.json).not.toHaveProperty('model');
  });

  it('streams a message through invoke-with-response-stream, the thinking signature included', async () => {
    const stream = signing().messages.stream({ model: CLAUDE_PROFILE, max_tokens: 2000, thinking, messages: [{ role: 'user', content: 'hi' }] });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: FAKE_THOUGHT, signature: 'sig-fake-1' },
      { type: 'text', text: TEXT },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(fake.requests[0]?.path).toBe(`/model/${CLAUDE_PROFILE}/invoke-with-response-stream`);
  });

  it('authenticates with a Bedrock API key as Bearer, and refuses an unknown one', async () => {
    const message = await keyed(FAKE_BEDROCK_API_KEY).messages.create({ model: CLAUDE_PROFILE, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: TEXT }]);
    expect(fake.requests[0]).toMatchObject({ cloud: { auth: 'bearer' } });
    const failure = await keyed('ABSKunknown').messages.create({ model: CLAUDE_PROFILE, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ status: 403, error: { message: 'The security token included in the request is invalid.' } });
  });
});

type ServiceAccount = { client_email: string; private_key: string; private_key_id: string; token_uri: string; project_id: string };

/** A JWT assertion for the service account, as the relay signs it. */
function assertion(account: ServiceAccount, claims: Record<string, unknown> = {}, privateKey: string = account.private_key): string {
  const now = Math.floor(Date.now() / 1000);
  const encode = (part: unknown) => Buffer.from(JSON.stringify(part)).toString('base64url');
  const unsigned = `${encode({ alg: 'RS256', typ: 'JWT', kid: account.private_key_id })}.${encode({
    iss: account.client_email,
    scope: 'https://www.googleapis.com/auth/cloud-platform',
    aud: account.token_uri,
    iat: now,
    exp: now + 3600,
    ...claims,
  })}`;
  return `${unsigned}.${sign('sha256', Buffer.from(unsigned), privateKey).toString('base64url')}`;
}

const exchange = (account: ServiceAccount, jwt: string) => fetch(account.token_uri, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwt }),
});

describe('Google Vertex AI', () => {
  let account: ServiceAccount;
  beforeEach(() => {
    account = JSON.parse(fakeVertexServiceAccount(fake.url)) as ServiceAccount;
  });
  async function accessToken(): Promise<string> {
    const response = await exchange(account, assertion(account));
    return ((await response.json()) as { access_token: string }).access_token;
  }
  /** An auth client handing out a token from the fake (google-auth-library exchanges at Google's fixed URL, not the key's token_uri). */
  const authClientWith = (token: string) => ({ projectId: FAKE_VERTEX_PROJECT, getRequestHeaders: () => Promise.resolve(new Headers({ authorization: `Bearer ${token}` })) });

  it('exchanges a signed JWT for an access token at the key file token_uri, each exchange recorded', async () => {
    expect(account).toMatchObject({ type: 'service_account', project_id: 'fake-project', token_uri: `${fake.url}/token`, private_key: expect.stringContaining('BEGIN PRIVATE KEY') });
    const response = await exchange(account, assertion(account));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ access_token: expect.stringMatching(/^ya29\./), expires_in: 3600, token_type: 'Bearer' });
    fake.setMode('error500', { vertexTokenTtlSeconds: 120 });
    const shorter = await exchange(account, assertion(account));
    expect(await shorter.json()).toMatchObject({ expires_in: 120 });
    expect(fake.requests.filter((request) => request.path === VERTEX_TOKEN_PATH).map((request) => request.dialect)).toEqual(['vertex', 'vertex']);
  });

  it('refuses a JWT signed by another key, for another audience or without the scope', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const stranger = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const refusals = [
      [assertion(account, {}, stranger), 'invalid_grant', 'Invalid JWT Signature.'],
      [assertion(account, { aud: 'https://oauth2.googleapis.com/token' }), 'invalid_grant', 'Invalid JWT: Failed audience check.'],
      [assertion(account, { scope: 'https://www.googleapis.com/auth/userinfo.email' }), 'invalid_scope', expect.any(String)],
      [assertion(account, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), 'invalid_grant', expect.stringContaining('short-lived')],
    ] as const;
    for (const [jwt, error, description] of refusals) {
      const response = await exchange(account, jwt);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error, error_description: description });
    }
  });

  it('answers rawPredict and streamRawPredict to @anthropic-ai/vertex-sdk with a token from the fake', async () => {
    const vertex = new AnthropicVertex({
      projectId: FAKE_VERTEX_PROJECT,
      region: 'us-east5',
      baseURL: `${fake.url}/v1`,
      authClient: authClientWith(await accessToken()) as unknown as NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>['authClient'],
      // The SDK copies its `anthropic-version` header into the body unless told Vertex's version.
      defaultHeaders: { 'anthropic-version': 'vertex-2023-10-16' },
      maxRetries: 0,
    });
    const message = await vertex.messages.create({ model: 'claude-sonnet-4-5@20250929', max_tokens: 100, messages: [{ role: 'user', content: 'one two' }] });
    expect(message).toMatchObject({ model: 'claude-sonnet-4-5@20250929', content: [{ type: 'text', text: TEXT }], usage: { input_tokens: 2, output_tokens: 5 } });
    const streamed = await vertex.messages.stream({ model: 'claude-sonnet-4-5@20250929', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: TEXT }]);
    const [, raw, stream] = fake.requests;
    expect(raw).toMatchObject({
      dialect: 'vertex',
      path: '/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
      cloud: { project: 'fake-project', region: 'us-east5', model: 'claude-sonnet-4-5@20250929', auth: 'bearer' },
      json: { anthropic_version: 'vertex-2023-10-16' },
    });
    expect(raw?.json).not.toHaveProperty('model');
    expect(stream?.path).toMatch(/:streamRawPredict$/);
  });

  it('answers generateContent and streamGenerateContent to @google/genai in Vertex mode', async () => {
    const authClient = authClientWith(await accessToken()) as unknown as NonNullable<GoogleGenAIOptions['googleAuthOptions']>['authClient'];
    // Jest's environment lacks undici's global dispatcher, which the SDK's default fetch path needs.
    const genai = new GoogleGenAI({ vertexai: true, project: FAKE_VERTEX_PROJECT, location: 'europe-west4', googleAuthOptions: { authClient }, httpOptions: { baseUrl: fake.url, fetch: globalThis.fetch } });
    const response = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'one two three' });
    expect(response.text).toBe(TEXT);
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 5 });
    const stream = await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe(TEXT);
    const [, whole, streamed] = fake.requests;
    expect(whole).toMatchObject({
      dialect: 'vertex',
      path: '/v1beta1/projects/fake-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent',
      cloud: { project: 'fake-project', region: 'europe-west4', model: 'gemini-2.5-flash', auth: 'bearer' },
    });
    expect(streamed?.url).toMatch(/:streamGenerateContent\?alt=sse$/);
  });

  it('refuses model calls without a token the fake issued, or after it expired', async () => {
    const path = '/v1/projects/fake-project/locations/global/publishers/google/models/gemini-2.5-flash:generateContent';
    const call = (token: string) => fetch(`${fake.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) });
    const forged = await call('ya29.fake.99999999999999.abc.def');
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ error: { code: 401, message: expect.stringContaining('Request had invalid authentication credentials'), status: 'UNAUTHENTICATED' } });
    fake.setMode('ok', { vertexTokenTtlSeconds: 0 });
    expect((await call(await accessToken())).status).toBe(401);
    fake.setMode('ok', { vertexTokenTtlSeconds: 3600 });
    expect((await call(await accessToken())).status).toBe(200);
  });

  it('refuses a rawPredict body naming the model or without Vertex anthropic_version', async () => {
    const token = await accessToken();
    const path = '/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:rawPredict';
    const body = { anthropic_version: 'vertex-2023-10-16', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    for (const wrong of [{ ...body, model: 'claude-sonnet-4-5' }, { ...body, anthropic_version: '2023-06-01' }]) {
      const response = await fetch(`${fake.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(wrong) });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    }
  });
});

describe('faults on the cloud routes', () => {
  let vertexToken: string;
  beforeEach(async () => {
    const account = JSON.parse(fakeVertexServiceAccount(fake.url)) as ServiceAccount;
    vertexToken = ((await (await exchange(account, assertion(account))).json()) as { access_token: string }).access_token;
  });
  const claude = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };
  const converse = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
  const gemini = { contents: [{ parts: [{ text: 'hi' }] }] };
  const vertexClaude = { ...claude, anthropic_version: 'vertex-2023-10-16' };
  const chat = { messages: [{ role: 'user', content: 'hi' }] };
  const routes = [
    { provider: 'azure', path: '/openai/deployments/d/chat/completions?api-version=2024-10-21', body: chat, stream: { ...chat, stream: true } },
    { provider: 'bedrock', path: '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke', body: claude, stream: claude },
    { provider: 'bedrock', path: `/model/${encodeURIComponent(NOVA)}/converse`, body: converse, stream: converse },
    { provider: 'vertex', path: '/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:generateContent', body: gemini, stream: gemini },
    { provider: 'vertex-claude', path: '/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:rawPredict', body: vertexClaude, stream: vertexClaude },
  ] as const;
  const streamPath = (path: string) => path
    .replace(/\/invoke$/, '/invoke-with-response-stream')
    .replace(/\/converse$/, '/converse-stream')
    .replace(':generateContent', ':streamGenerateContent?alt=sse')
    .replace(':rawPredict', ':streamRawPredict');
  const statuses: Partial<Record<FakeMode, Record<string, number>>> = {
    error400: { azure: 400, bedrock: 400, vertex: 400, 'vertex-claude': 400 },
    error401: { azure: 401, bedrock: 403, vertex: 401, 'vertex-claude': 401 },
    error403: { azure: 403, bedrock: 403, vertex: 403, 'vertex-claude': 403 },
    error429: { azure: 429, bedrock: 429, vertex: 429, 'vertex-claude': 429 },
    quotaExhausted: { azure: 429, bedrock: 429, vertex: 429, 'vertex-claude': 429 },
    error500: { azure: 500, bedrock: 500, vertex: 500, 'vertex-claude': 500 },
    overloaded: { azure: 503, bedrock: 503, vertex: 503, 'vertex-claude': 529 },
    errorMidStream: { azure: 503, bedrock: 503, vertex: 503, 'vertex-claude': 529 },
  };
  const headersFor = () => ({ 'content-type': 'application/json', 'api-key': KEY, authorization: `Bearer ${vertexToken}` });
  const send = (path: string, body: unknown, fakeMode: FakeMode, signal?: AbortSignal) => {
    const headers = path.startsWith('/model/') ? { ...headersFor(), authorization: `Bearer ${FAKE_BEDROCK_API_KEY}` } : headersFor();
    return fetch(`${fake.url}${path}`, { method: 'POST', headers: { ...headers, 'x-fake-mode': fakeMode }, body: JSON.stringify(body), signal });
  };

  it.each(routes)('$path answers each error mode in its provider shape', async ({ provider, path, body }) => {
    for (const [fakeMode, byProvider] of Object.entries(statuses)) {
      const response = await send(path, body, fakeMode as FakeMode);
      const error: unknown = await response.json();
      expect([fakeMode, response.status]).toEqual([fakeMode, byProvider[provider]]);
      if (provider === 'bedrock') {
        expect(response.headers.get('x-amzn-errortype')).toMatch(/^[A-Za-z]+Exception:/);
        expect(error).toEqual({ message: expect.any(String) });
      } else if (provider === 'azure') expect(error).toMatchObject({ error: { message: expect.any(String) } });
      // Vertex's own refusals are Google's; a Claude model's own errors are Anthropic's.
      else if (provider === 'vertex' || [401, 403, 429].includes(response.status)) expect(error).toMatchObject({ error: { code: response.status, status: expect.any(String) } });
      else expect(error).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    }
  });

  it.each(routes)('$path echoes the key and an address in error400', async ({ path, body }) => {
    const text = await (await send(path, body, 'error400')).text();
    expect(text).toContain('https://upstream.internal/');
  });

  /** The text of a stream: SSE as it is, event-stream frames decoded (each as its event type and payload). */
  const textOf = (provider: string, bytes: Buffer) =>
    (provider === 'bedrock' ? framesIn(bytes).map((frame) => `${String(frame.headers[':event-type'])} ${frame.text}`).join('\n') : bytes.toString());

  it.each(routes)('$path streams two text pieces before resetMidStream and hangMidStream strike', async ({ provider, path, stream }) => {
    const abort = new AbortController();
    const read = async (fakeMode: FakeMode) => {
      const response = await send(streamPath(path), stream, fakeMode, abort.signal);
      const reader = response.body?.getReader();
      let bytes = Buffer.alloc(0);
      // A hung stream never ends: stop reading once it has sent its two pieces.
      while (reader && (pieces(textOf(provider, bytes)) < 2 || fakeMode === 'resetMidStream')) {
        const chunk = await reader.read().catch(() => undefined);
        if (!chunk || chunk.done) break;
        bytes = Buffer.concat([bytes, chunk.value]);
      }
      return textOf(provider, bytes);
    };
    expect(pieces(await read('resetMidStream'))).toBe(2);
    expect(pieces(await read('hangMidStream'))).toBe(2);
    abort.abort();
  });

  it.each(routes)('$path ends a stream after two pieces without its end marker (endMidStream), with an error event (errorMidStream)', async ({ provider, path, stream }) => {
    const marker = { azure: '[DONE]', bedrock: /message_?[sS]top/, vertex: 'finishReason', 'vertex-claude': 'message_stop' }[provider];
    const ended = textOf(provider, Buffer.from(await (await send(streamPath(path), stream, 'endMidStream')).arrayBuffer()));
    expect(pieces(ended)).toBe(2);
    expect(ended).not.toMatch(marker);
    const failed = await send(streamPath(path), stream, 'errorMidStream');
    const bytes = Buffer.from(await failed.arrayBuffer());
    if (provider === 'bedrock') expect(framesIn(bytes).at(-1)?.headers).toMatchObject({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException' });
    else expect(bytes.toString()).toMatch(/error/);
  });

  it('writes an oversized event-stream frame whose length and CRCs hold', async () => {
    fake.setMode('oversized', { oversizedBytes: 3 * 1024 * 1024 + 5 });
    const response = await send(`/model/${encodeURIComponent(NOVA)}/converse-stream`, converse, 'oversized');
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const frames = framesIn(Buffer.from(await response.arrayBuffer()));
    expect(frames.at(-1)?.text).toHaveLength(3 * 1024 * 1024 + 5 + '{"padding":""}'.length);
  });
});
