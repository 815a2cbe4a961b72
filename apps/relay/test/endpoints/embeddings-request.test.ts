// `POST /v1/embeddings` bodies (docs/api.md 2.8): what is refused (400 naming the field), the
// internal request every provider receives, and the prompt tokens reserved and charged.
import { AppError } from '@modelgate/errors';
import type { EmbeddingCreateParams } from 'openai/resources/embeddings';
import {
  countEmbeddingsPromptTokens,
  embeddingRequestOf,
  type EmbeddingsBody,
  estimateEmbeddings,
  parseEmbeddingsRequest,
} from '../../src/dialects/openai/embeddings-request';
import type { EmbeddingRequest } from '../../src/core/chat';
import { countPromptTextTokens, estimateTextTokens } from '../../src/features/relay/tokens';
import { thrownBy } from '../thrown';

function parse(body: unknown): EmbeddingsBody {
  return parseEmbeddingsRequest(Buffer.from(JSON.stringify(body)));
}

describe('parseEmbeddingsRequest', () => {
  it('accepts what the OpenAI SDK sends, unknown fields kept', () => {
    const body: EmbeddingCreateParams = { model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 256, encoding_format: 'base64', user: 'u' };
    expect(parse(body)).toEqual(body);
  });

  it.each<[string, unknown, string]>([
    ['no model', { input: 'a' }, 'model'],
    ['a NUL in model', { model: 'e\u0000', input: 'a' }, 'model'],
    ['no input', { model: 'e' }, 'input'],
    ['an empty string', { model: 'e', input: '' }, 'input'],
    ['an empty list', { model: 'e', input: [] }, 'input'],
    ['a list of numbers and strings', { model: 'e', input: ['a', 1] }, 'input'],
    ['negative token ids', { model: 'e', input: [-1] }, 'input.0'],
    ['dimensions of 0', { model: 'e', input: 'a', dimensions: 0 }, 'dimensions'],
    ['an unknown encoding', { model: 'e', input: 'a', encoding_format: 'int8' }, 'encoding_format'],
  ])('refuses %s, naming the field', (_, body, param) => {
    const thrown = thrownBy(() => parse(body));
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'invalid_request', param });
  });
});

describe('embeddingRequestOf', () => {
  it.each<[string, EmbeddingCreateParams['input'], EmbeddingRequest['inputs']]>([
    ['one string', 'hello', ['hello']],
    ['strings', ['a', 'b'], ['a', 'b']],
    ['one token array', [1, 2, 3], [[1, 2, 3]]],
    ['token arrays', [[1], [2, 3]], [[1], [2, 3]]],
  ])('makes one input per embedding: %s', (_, input, inputs) => {
    expect(embeddingRequestOf(parse({ model: 'e', input, dimensions: 64 }))).toEqual({ model: 'e', inputs, dimensions: 64 });
  });
});

describe('estimateEmbeddings and countEmbeddingsPromptTokens', () => {
  it.each<[string, EmbeddingCreateParams['input'], number, number]>([
    [
      'text by size and by tokenizer',
      ['The quick brown fox', 'jumps'],
      estimateTextTokens('The quick brown fox') + estimateTextTokens('jumps'),
      countPromptTextTokens('The quick brown fox') + countPromptTextTokens('jumps'),
    ],
    ['token ids exactly', [[1, 2, 3], [4]], 4, 4],
  ])('%s', (_, input, reserved, charged) => {
    const body = parse({ model: 'e', input });
    expect(estimateEmbeddings(body)).toEqual({ promptTokens: reserved, completionTokens: 0 });
    expect(countEmbeddingsPromptTokens(body)).toBe(charged);
  });
});
