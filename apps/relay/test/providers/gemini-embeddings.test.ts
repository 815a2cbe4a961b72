// /v1/embeddings on a Gemini channel: batchEmbedContents (docs/api.md 2.8).
import { UpstreamFailure } from '../../src/features/upstream/client';
import { geminiProvider } from '../../src/providers/gemini';

const CHANNEL = { id: 1, key: 'AIza-embed', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

function embeddings() {
  const { embeddings: operations } = geminiProvider;
  if (!operations) throw new Error('the Gemini provider has no embeddings');
  return operations;
}

describe('Gemini embeddings request', () => {
  it.each<[string, number | undefined, Record<string, unknown>]>([
    ['without dimensions', undefined, {}],
    ['with dimensions', 768, { outputDimensionality: 768 }],
  ])('asks for one embedding per input, in order, %s', (_, dimensions, extra) => {
    const call = embeddings().request(CHANNEL, 'gemini-embedding-001', { model: 'text-embedding', inputs: ['first', 'second'], dimensions });
    expect(call.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(call.headers).toEqual({ 'x-goog-api-key': 'AIza-embed', 'content-type': 'application/json' });
    expect(JSON.parse(call.body as string)).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first' }] }, ...extra },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second' }] }, ...extra },
      ],
    });
  });

  it('refuses token ids: Gemini embeds text only', () => {
    const request = () => embeddings().request(CHANNEL, 'gemini-embedding-001', { model: 'm', inputs: ['text', [1, 2, 3]] });
    expect(request).toThrow(expect.objectContaining({ code: 'invalid_request', status: 400, param: 'input' }));
    expect(request).toThrow('input: Gemini embeddings take text, not token ids');
  });
});

describe('Gemini embeddings response', () => {
  it.each<[string, unknown, { vectors: number[][]; promptTokens?: number }]>([
    ['vectors in order, no usage', { embeddings: [{ values: [0.1, -0.2] }, { values: [0.3, 0.4] }] }, { vectors: [[0.1, -0.2], [0.3, 0.4]], promptTokens: undefined }],
    ['with usage', { embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: 6 } }, { vectors: [[1]], promptTokens: 6 }],
    ['with an unbelievable usage', { embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: -6 } }, { vectors: [[1]], promptTokens: undefined }],
  ])('%s', (_, body, expected) => {
    expect(embeddings().response(body)).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['no embeddings', {}],
    ['an embedding without values', { embeddings: [{}] }],
    ['values that are not numbers', { embeddings: [{ values: ['0.1'] }] }],
  ])('refuses %s as a malformed answer', (_, body) => {
    expect(() => embeddings().response(body)).toThrow(UpstreamFailure);
  });
});
