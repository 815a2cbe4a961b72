import {
  chatCompletionSchema,
  completionRequestSchema,
  countTokensSchema,
  embeddingsSchema,
  generateContentSchema,
  imageEditFieldsSchema,
  imageGenerationSchema,
  messagesSchema,
  moderationSchema,
  RELAY_OPERATIONS,
  rerankSchema,
  responsesSchema,
  speechSchema,
  transcriptionFieldsSchema,
} from '../src/relay';

/** The Express-style path parameters: `/v1beta/models/:model:generateContent` -> ['model']. */
const pathParameters = (path: string) => [...path.matchAll(/\/:([A-Za-z_]+)/g)].map((match) => match[1]);

const bodyOf = (method: string, path: string) =>
  RELAY_OPERATIONS.find((operation) => operation.method === method && operation.path === path)?.body;

describe('RELAY_OPERATIONS', () => {
  it('describes each relay operation once, under /v1 or /v1beta', () => {
    const keys = RELAY_OPERATIONS.map((operation) => `${operation.method} ${operation.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const operation of RELAY_OPERATIONS) expect(operation.path).toMatch(/^\/v1(beta)?\//);
  });

  it('holds the very schemas the relay validates request bodies with', () => {
    expect(bodyOf('post', '/v1/completions')).toBe(completionRequestSchema);
    expect(bodyOf('post', '/v1/chat/completions')).toBe(chatCompletionSchema);
    expect(bodyOf('post', '/v1/embeddings')).toBe(embeddingsSchema);
    expect(bodyOf('post', '/v1/responses')).toBe(responsesSchema);
    expect(bodyOf('post', '/v1/messages')).toBe(messagesSchema);
    expect(bodyOf('post', '/v1/messages/count_tokens')).toBe(countTokensSchema);
    for (const version of ['/v1beta', '/v1']) {
      expect(bodyOf('post', `${version}/models/:model:generateContent`)).toBe(generateContentSchema);
      expect(bodyOf('post', `${version}/models/:model:streamGenerateContent`)).toBe(generateContentSchema);
    }
    expect(bodyOf('get', '/v1/models')).toBeUndefined();
    expect(bodyOf('post', '/v1/images/generations')).toBe(imageGenerationSchema);
    expect(bodyOf('post', '/v1/images/edits')).toBe(imageEditFieldsSchema);
    expect(bodyOf('post', '/v1/audio/speech')).toBe(speechSchema);
    expect(bodyOf('post', '/v1/audio/transcriptions')).toBe(transcriptionFieldsSchema);
    expect(bodyOf('post', '/v1/audio/translations')).toBe(transcriptionFieldsSchema);
    expect(bodyOf('post', '/v1/moderations')).toBe(moderationSchema);
    expect(bodyOf('post', '/v1/rerank')).toBe(rerankSchema);
  });

  it('names the file parts of the multipart uploads (docs/api.md 2.13)', () => {
    const uploads = RELAY_OPERATIONS.filter((operation) => operation.multipart).map((operation) => [operation.path, Object.keys(operation.multipart ?? {})]);
    expect(uploads).toEqual([
      ['/v1/images/edits', ['image', 'image[]', 'mask']],
      ['/v1/audio/transcriptions', ['file']],
      ['/v1/audio/translations', ['file']],
    ]);
  });

  it('declares a schema for exactly the path parameters of each path', () => {
    for (const operation of RELAY_OPERATIONS) {
      const declared = operation.params ? Object.keys(operation.params.shape) : [];
      expect({ path: operation.path, params: declared }).toEqual({ path: operation.path, params: pathParameters(operation.path) });
    }
  });

  it('takes the key and answers errors as docs/api.md 2 and 1.3 say for each surface', () => {
    const surfaces = RELAY_OPERATIONS.map((operation) => `${operation.path} ${operation.key} ${operation.errors}`);
    expect(surfaces).toEqual(
      expect.arrayContaining([
        '/v1/chat/completions openai openai',
        '/v1/messages anthropic anthropic',
        '/v1/messages/count_tokens anthropic anthropic',
        '/v1/models anthropic openai',
        '/v1/models/:model:generateContent gemini gemini',
        '/v1beta/models/:model:streamGenerateContent gemini gemini',
      ]),
    );
  });

  it('describes answers that parse what the relay sends', () => {
    const models = RELAY_OPERATIONS.find((operation) => operation.path === '/v1/models')?.response;
    const openAIList = { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1626777600, owned_by: 'openai' }] };
    const anthropicList = {
      data: [{ type: 'model', id: 'claude-sonnet-4-5', display_name: 'claude-sonnet-4-5', created_at: '2021-07-20T10:40:00.000Z' }],
      has_more: false,
      first_id: 'claude-sonnet-4-5',
      last_id: 'claude-sonnet-4-5',
    };
    expect(models?.parse(openAIList)).toEqual(openAIList);
    expect(models?.parse(anthropicList)).toEqual(anthropicList);
  });
});
