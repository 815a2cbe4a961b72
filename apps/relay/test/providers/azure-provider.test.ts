// The Azure OpenAI provider (channel type 3, docs/api.md 2.12): where each operation goes on the
// resource, the api-key header and api-version, Azure's answers and errors read as OpenAI's.
import { AZURE_API_VERSION } from '@modelgate/schemas';
import type { ChatRequest } from '../../src/core/chat';
import type { ClientRequest, SseEvent, UpstreamTarget } from '../../src/core/provider';
import { azureProvider } from '../../src/providers/azure';

const KEY = 'azure-resource-key-0123456789abcdef';
const channel: UpstreamTarget = { id: 3, key: KEY, origin: 'https://example-resource.openai.azure.com', pathPrefix: '', settings: {} };
const pinned: UpstreamTarget = { ...channel, settings: { api_version: '2025-04-01-preview' } };

/** A client's body as a pass-through hands it over. */
function clientRequest(json: Record<string, unknown>): ClientRequest {
  return { json, stream: json.stream === true, bodyFor: (model) => JSON.stringify({ ...json, model }) };
}

const CHAT: ChatRequest = { model: 'gpt-4o', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true };

describe('azureProvider routes', () => {
  it.each([
    ['completions', 'completions'],
    ['chat', 'chat/completions'],
    ['embeddings', 'embeddings'],
  ] as const)('passes %s through to the deployment route with the default api-version', (operation, suffix) => {
    const call = azureProvider.native(operation, channel, 'my gpt/4o')?.(clientRequest({ model: 'gpt-4o', input: 'x' }));
    expect(call?.path).toBe(`/openai/deployments/my%20gpt%2F4o/${suffix}?api-version=${AZURE_API_VERSION}`);
    expect(call?.headers).toEqual({ 'api-key': KEY, 'content-type': 'application/json' });
    expect(JSON.parse(String(call?.body))).toEqual({ model: 'my gpt/4o', input: 'x' });
  });

  it("uses the channel's settings.api_version and its path prefix", () => {
    const call = azureProvider.native('chat', { ...pinned, pathPrefix: '/proxy' }, 'gpt-4o-prod')?.(clientRequest({ model: 'gpt-4o' }));
    expect(call?.path).toBe('/proxy/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview');
  });

  it('sends Responses to the v1 API with the deployment as model and no api-version', () => {
    const call = azureProvider.native('responses', pinned, 'gpt-5-prod')?.(clientRequest({ model: 'gpt-5', input: 'hi' }));
    expect(call?.path).toBe('/openai/v1/responses');
    expect(call?.headers).toEqual({ 'api-key': KEY, 'content-type': 'application/json' });
    expect(JSON.parse(String(call?.body))).toEqual({ model: 'gpt-5-prod', input: 'hi' });
  });

  it.each(['messages', 'count_tokens', 'gemini'] as const)('has no native %s: it is translated or not routed', (operation) => {
    expect(azureProvider.native(operation, channel, 'gpt-4o')).toBeUndefined();
  });

  it('translates chat to the deployment chat route, never with an Authorization header', () => {
    const call = azureProvider.chat(pinned, 'gpt-4o-prod').request(CHAT);
    expect(call.path).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview');
    expect(call.headers).toEqual({ 'api-key': KEY, 'content-type': 'application/json' });
    expect(JSON.parse(String(call.body))).toEqual({
      model: 'gpt-4o-prod',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('is channel type 3 and needs no authorize step', () => {
    expect(azureProvider.facts.type).toBe(3);
    expect(azureProvider.authorize).toBeUndefined();
  });
});

const SAFE = { filtered: false, severity: 'safe' };
const PROMPT_FILTER_RESULTS = [{ prompt_index: 0, content_filter_results: { hate: SAFE, violence: SAFE } }];

const sse = (payload: unknown): SseEvent => {
  const data = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return { raw: `data: ${data}\n\n`, data, event: null };
};

describe("Azure's answers through the internal form", () => {
  it('reads a chat completion with prompt_filter_results and content_filter_results', () => {
    const response = azureProvider.chat(channel, 'gpt-4o-prod').response({
      id: 'chatcmpl-azure1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-2024-11-20',
      prompt_filter_results: PROMPT_FILTER_RESULTS,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hello' }, content_filter_results: { hate: SAFE } }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    expect(response).toMatchObject({
      id: 'chatcmpl-azure1',
      choices: [{ index: 0, content: [{ type: 'text', text: 'hello' }], finishReason: 'stop' }],
      usage: { promptTokens: 3, completionTokens: 1 },
    });
  });

  it("starts a stream at the first real chunk, after Azure's prompt filter chunk (empty id and model, no choices)", () => {
    const decoder = azureProvider.chat(channel, 'gpt-4o-prod').stream();
    expect(decoder.decode(sse({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER_RESULTS }))).toEqual([]);
    expect(decoder.decode(sse({ id: 'chatcmpl-azure2', created: 1_700_000_000, model: 'gpt-4o', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] }))).toEqual([
      { type: 'start', id: 'chatcmpl-azure2', created: 1_700_000_000 },
      { type: 'text', choice: 0, text: 'hi' },
    ]);
    // Azure's asynchronous filter sends choices with filter results and no delta.
    expect(decoder.decode(sse({ id: 'chatcmpl-azure2', choices: [{ index: 0, content_filter_results: { hate: SAFE }, finish_reason: null }] }))).toEqual([]);
    expect(decoder.decode(sse({ id: 'chatcmpl-azure2', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] }))).toEqual([
      { type: 'finish', choice: 0, reason: 'content_filter' },
    ]);
    decoder.decode(sse('[DONE]'));
    expect(decoder.complete).toBe(true);
  });
});

describe('Azure errors and channel disabling', () => {
  const body = (value: unknown) => Buffer.from(JSON.stringify(value));

  it("reads a content filter refusal: code content_filter, Azure's null type dropped", () => {
    const error = azureProvider.errorOf(
      body({ error: { message: 'The response was filtered', type: null, param: 'prompt', code: 'content_filter', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation' } } }),
      {},
    );
    expect(error).toEqual({ message: 'The response was filtered', type: undefined, param: 'prompt', code: 'content_filter' });
    expect(azureProvider.disablingReason(400, error)).toBeUndefined();
  });

  it.each([401, 403])('disables a channel answered %i', (status) => {
    const error = azureProvider.errorOf(body({ error: { code: String(status), message: 'Access denied due to invalid subscription key' } }), {});
    expect(azureProvider.disablingReason(status, error)).toBe(`upstream answered ${status}`);
  });

  it('disables on exhausted quota but not on a rate limit', () => {
    const quota = azureProvider.errorOf(body({ error: { code: 'insufficient_quota', message: 'You exceeded your current quota' } }), {});
    expect(azureProvider.disablingReason(429, quota)).toBe('upstream quota exhausted');
    const rate = azureProvider.errorOf(body({ error: { code: '429', message: 'Requests have exceeded token rate limit of your current OpenAI S0 pricing tier.' } }), {});
    expect(azureProvider.disablingReason(429, rate)).toBeUndefined();
    expect(azureProvider.disablingReason(503, undefined)).toBeUndefined();
  });
});
