// The OpenAI-compatible provider (channel type 1): its upstream requests, embeddings both ways,
// its error bodies and the rule that disables a channel (docs/api.md 2.4, 2.6, 2.8).
import type { CreateEmbeddingResponse } from 'openai/resources/embeddings';
import { UpstreamFailure } from '../../src/features/upstream/client';
import type { ChatRequest, EmbeddingResponse } from '../../src/core/chat';
import { openaiProvider } from '../../src/providers/openai';
import { embeddingsResponseToOpenAI } from '../../src/dialects/openai/embeddings-from-internal';
import { embeddingsResponseFromOpenAI } from '../../src/providers/openai/embeddings';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const channel = { id: 1, key: 'sk-channel-key', origin: 'http://upstream.test', pathPrefix: '/openai', settings: {} };

describe('openaiProvider requests', () => {
  it('posts chat to {prefix}/v1/chat/completions with the channel key and the mapped model', () => {
    const request: ChatRequest = { model: 'gpt-4o', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true };
    const call = openaiProvider.chat(channel, 'gpt-4o-2024-08-06').request(request);
    expect(call.path).toBe('/openai/v1/chat/completions');
    expect(call.headers).toEqual({ authorization: 'Bearer sk-channel-key', 'content-type': 'application/json' });
    expect(JSON.parse(call.body.toString())).toEqual({
      model: 'gpt-4o-2024-08-06',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('posts embeddings to {prefix}/v1/embeddings', () => {
    const call = openaiProvider.embeddings?.request(channel, 'text-embedding-3-small', { model: 'emb', inputs: ['a', 'b'], dimensions: 256 });
    expect(call?.path).toBe('/openai/v1/embeddings');
    expect(JSON.parse(String(call?.body))).toEqual({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 256 });
  });

  it('is channel type 1', () => {
    expect(openaiProvider.facts.type).toBe(1);
    expect(openaiProvider.chat(TEST_CHANNEL, 'm').stream().done).toBe(false);
  });
});

/** Float32 values, so that a float32 round trip is exact. */
const VECTORS = [
  [0.5, -1.25, 3],
  [Math.fround(0.1), Math.fround(-0.2), Math.fround(0.3)],
];

function float32Base64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

const FLOAT_ANSWER: CreateEmbeddingResponse = {
  object: 'list',
  model: 'text-embedding-3-small',
  data: [
    { object: 'embedding', index: 1, embedding: VECTORS[1] ?? [] },
    { object: 'embedding', index: 0, embedding: VECTORS[0] ?? [] },
  ],
  usage: { prompt_tokens: 9, total_tokens: 9 },
};

describe('embeddings', () => {
  it.each<[string, unknown, EmbeddingResponse]>([
    ['float vectors, in input order whatever the order of data', FLOAT_ANSWER, { vectors: VECTORS, promptTokens: 9 }],
    [
      'base64 vectors (float32 little-endian)',
      {
        object: 'list',
        model: 'text-embedding-3-small',
        data: [{ object: 'embedding', index: 0, embedding: float32Base64(VECTORS[0] ?? []) }],
        usage: { prompt_tokens: 4, total_tokens: 4 },
      },
      { vectors: [VECTORS[0] ?? []], promptTokens: 4 },
    ],
  ])('reads %s', (_, body, expected) => {
    expect(embeddingsResponseFromOpenAI(body)).toEqual(expected);
  });

  it('leaves promptTokens undefined when the upstream reported none', () => {
    expect(embeddingsResponseFromOpenAI({ data: [{ embedding: [1] }] })).toEqual({ vectors: [[1]], promptTokens: undefined });
  });

  it.each<[string, unknown]>([
    ['no data', { object: 'list' }],
    ['an item that is not an object', { data: [5] }],
    ['a vector with a non-number', { data: [{ embedding: [1, 'x'] }] }],
    ['base64 that is not whole float32 values', { data: [{ embedding: 'AAA=' }] }],
  ])('refuses %s as a failed upstream call', (_, body) => {
    expect(() => embeddingsResponseFromOpenAI(body)).toThrow(UpstreamFailure);
  });

  it('writes the OpenAI answer with the client model and usage', () => {
    const written: CreateEmbeddingResponse = {
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: VECTORS[0] ?? [] },
        { object: 'embedding', index: 1, embedding: VECTORS[1] ?? [] },
      ],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    };
    expect(embeddingsResponseToOpenAI({ vectors: VECTORS }, 'gemini-embedding-001', 'float', 7)).toEqual(written);
  });

  it('writes base64 vectors that decode, as the OpenAI SDK does (Float32Array), to the same floats', () => {
    const written = embeddingsResponseToOpenAI({ vectors: VECTORS }, 'm', 'base64', 3) as { data: { embedding: string }[] };
    const decoded = written.data.map((item) => {
      const bytes = Buffer.from(item.embedding, 'base64');
      return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / Float32Array.BYTES_PER_ELEMENT));
    });
    expect(decoded).toEqual(VECTORS);
    expect(embeddingsResponseFromOpenAI(written).vectors).toEqual(VECTORS);
  });
});

describe('errors', () => {
  it.each([
    [
      'an OpenAI error',
      { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
      { message: 'Incorrect API key provided', type: 'invalid_request_error', param: undefined, code: 'invalid_api_key' },
    ],
    ['a numeric code', { error: { message: 'x', code: 429 } }, { message: 'x', type: undefined, param: undefined, code: 429 }],
    ['an error string', { error: 'model not loaded' }, { message: 'model not loaded' }],
    ['a body that is no error', { detail: 'Not Found' }, undefined],
  ])('reads %s', (_, body, expected) => {
    expect(openaiProvider.errorOf(Buffer.from(JSON.stringify(body)), {})).toEqual(expected);
  });

  it('reads nothing from a body that is not JSON', () => {
    expect(openaiProvider.errorOf(Buffer.from('<html>Bad Gateway</html>'), {})).toBeUndefined();
  });

  it.each<[number, object | undefined, string | undefined]>([
    [401, undefined, 'upstream answered 401'],
    [403, { message: 'Country not supported' }, 'upstream answered 403'],
    [429, { code: 'insufficient_quota', message: 'You exceeded your current quota' }, 'upstream quota exhausted'],
    [400, { type: 'billing_not_active' }, 'upstream quota exhausted'],
    [429, { message: 'Your credit balance is too low to access the API' }, 'upstream quota exhausted'],
    [429, { message: 'Rate limit reached for gpt-4o in organization org-x on tokens per min' }, undefined],
    [400, { message: 'You exceeded your current quota' }, undefined],
    [500, undefined, undefined],
  ])('a channel that answered %i %j is disabled for: %s', (status, error, reason) => {
    expect(openaiProvider.disablingReason(status, error)).toBe(reason);
  });
});
