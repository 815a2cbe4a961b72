// docs/api.md 2.2 and 2.3: Gemini native operations (text and text-to-speech) and model lists.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { createChannel } from '@modelgate/testing';
import { fakePcmBase64 } from '@modelgate/testing/fake-upstream';
import { consumeLogs, createCustomer, harness, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite, upstream } from './harness';

const TTS_MODEL = 'gemini-2.5-flash-preview-tts';
const TEXT_MODEL = 'gemini-2.5-flash';

relaySuite();

beforeEach(async () => {
  // Default prices (docs/api.md 2.5): TTS models are priced out of the box.
  await resetSuite({ chunks: 5, chunkDelayMs: 0, audioMs: 1000 });
  await createChannel(harness.prisma, {
    type: 24,
    baseUrl: upstream.url,
    models: `${TEXT_MODEL},${TTS_MODEL}`,
    key: 'gemini-channel-secret',
  });
  await openAiChannel(harness.prisma, upstream.url);
  await harness.reloadCaches();
});

function genai(key: string, apiVersion?: string): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: key,
    httpOptions: { baseUrl: harness.url, ...(apiVersion ? { apiVersion } : {}), fetch: globalThis.fetch },
  });
}

describe('Gemini generateContent', () => {
  it('answers the Google GenAI SDK on its default /v1 path and bills usageMetadata', async () => {
    const customer = await createCustomer(harness.prisma);
    const response = await genai(customer.key).models.generateContent({ model: TEXT_MODEL, contents: 'one two three' });
    expect(response.text).toBe(' hello'.repeat(5));
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 5, totalTokenCount: 8 });
    expect(upstream.requests[0]?.path).toBe(`/v1beta/models/${TEXT_MODEL}:generateContent`);

    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    // round((3 + 5 x 8.333333) x 0.15) = 7
    expect(log).toMatchObject({ modelName: TEXT_MODEL, promptTokens: 3, completionTokens: 5, quota: -7n, isStream: false });
  });

  it('relays text-to-speech: speechConfig reaches the upstream, audio comes back intact, audio tokens are billed', async () => {
    const customer = await createCustomer(harness.prisma);
    const response = await genai(customer.key, 'v1beta').models.generateContent({
      model: TTS_MODEL,
      contents: [{ parts: [{ text: 'Say cheerfully: have a wonderful day' }] }],
      config: {
        responseModalities: ['AUDIO'],
        speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
      },
    });
    const part = response.candidates?.[0]?.content?.parts?.[0];
    expect(part?.inlineData?.mimeType).toBe('audio/L16;codec=pcm;rate=24000');
    expect(part?.inlineData?.data).toBe(fakePcmBase64(1000));
    expect(Buffer.from(part!.inlineData!.data!, 'base64')).toHaveLength(48_000);

    const [received] = upstream.requests;
    expect(received?.path).toBe(`/v1beta/models/${TTS_MODEL}:generateContent`);
    expect(received?.json).toMatchObject({
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
    });
    expect(received?.headers['x-goog-api-key']).toBe('gemini-channel-secret');
    expect(JSON.stringify(received?.headers) + String(received?.url)).not.toContain(customer.key.slice(3));

    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    // 6 prompt words + 25 audio tokens: round((6 + 25 x 20) x 0.25) = 127
    expect(log).toMatchObject({ modelName: TTS_MODEL, promptTokens: 6, completionTokens: 25, quota: -127n });
  });

  it('forwards the body byte-for-byte', async () => {
    const customer = await createCustomer(harness.prisma);
    const body = Buffer.from(
      '{ "generationConfig" : {"speechConfig":{"voiceConfig":{"prebuiltVoiceConfig":{"voiceName":"Puck"}}},' +
        '"responseModalities":["AUDIO"], "temperature": 1.50},\n  "contents":[{"role":"user","parts":[{"text":"caf\\u00e9 ☕"}]}],' +
        ' "unknownField": {"kept": [1, 2.0, "x"]} }',
    );
    const response = await fetch(`${harness.url}/v1beta/models/${TTS_MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': customer.key },
      body,
    });
    expect(response.status).toBe(200);
    expect(upstream.requests[0]?.body.equals(body)).toBe(true);
  });

  it('passes streamGenerateContent events through as they come and bills the last usageMetadata', async () => {
    const customer = await createCustomer(harness.prisma);
    const stream = await genai(customer.key, 'v1beta').models.generateContentStream({ model: TEXT_MODEL, contents: 'a b' });
    const texts: string[] = [];
    for await (const chunk of stream) texts.push(chunk.text ?? '');
    expect(texts).toEqual(Array(5).fill(' hello'));
    expect(upstream.requests[0]?.url).toBe(`/v1beta/models/${TEXT_MODEL}:streamGenerateContent?alt=sse`);

    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({ promptTokens: 2, completionTokens: 5, isStream: true });
  });

  it('reports failures to the SDK in Google shape', async () => {
    const failure = await genai(`sk-${'q'.repeat(48)}`).models.generateContent({ model: TEXT_MODEL, contents: 'hi' }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ status: 401 });
    expect(String((failure as Error).message)).toContain('UNAUTHENTICATED');
  });
});

describe('model lists', () => {
  it('GET /v1/models lists the models of the group, filtered by the key allow-list', async () => {
    const open = await createCustomer(harness.prisma);
    const ids = [];
    for await (const model of openAiClient(harness, open.key).models.list()) ids.push(model.id);
    expect(ids).toEqual([TEXT_MODEL, TTS_MODEL, MODEL].sort());

    const limited = await createCustomer(harness.prisma, { modelLimitsEnabled: true, modelLimits: `${MODEL},gpt-4o` });
    const page = await openAiClient(harness, limited.key).models.list();
    expect(page.data).toEqual([{ id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'openai' }]);

    const vip = await createCustomer(harness.prisma, { group: 'vip' });
    expect((await openAiClient(harness, vip.key).models.list()).data).toEqual([]);
  });

  it("GET /v1/models answers an Anthropic client (x-api-key, anthropic-version) in Anthropic's shape, as Claude Code discovers models", async () => {
    const { key } = await createCustomer(harness.prisma, { modelLimitsEnabled: true, modelLimits: `${MODEL},${TEXT_MODEL}` });
    const page = await new Anthropic({ baseURL: harness.url, apiKey: key, maxRetries: 0 }).models.list({ limit: 1000 });
    expect(page.data).toEqual([MODEL, TEXT_MODEL].sort().map((id) => ({ type: 'model', id, display_name: id, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })));
    expect(page.has_more).toBe(false);
  });

  it('GET /v1beta/models lists the Gemini models', async () => {
    const { key } = await createCustomer(harness.prisma);
    const response = await fetch(`${harness.url}/v1beta/models`, { headers: { 'x-goog-api-key': key } });
    const body = (await response.json()) as { models: { name: string }[] };
    expect(body.models.map((m) => m.name)).toEqual([`models/${TEXT_MODEL}`, `models/${TTS_MODEL}`]);
  });
});
