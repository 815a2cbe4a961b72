// A Codex tool round trip through a translated channel (docs/api.md 2.10): the provider's answer
// goes out as a Responses object, the stateless client sends its output back as the next input,
// and the provider receives its own reasoning signature with its tool call, as it requires.
import type { ResponseCreateParams } from 'openai/resources/responses/responses';
import { parseResponsesRequest } from '../../src/dialects/responses/request';
import { anthropicProvider } from '../../src/providers/anthropic';
import type { ChatUsage } from '../../src/core/chat';
import { geminiProvider } from '../../src/providers/gemini';
import type { Provider } from '../../src/core/provider';
import { chatRequestFromResponses } from '../../src/dialects/responses/to-internal';
import { chatResponseToResponses } from '../../src/dialects/responses/from-internal';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const USAGE: ChatUsage = { promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
const channel = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

/** What Codex sends: its instructions, the conversation so far, stateless with encrypted reasoning. */
function codexRequest(input: unknown[]) {
  const body: Partial<ResponseCreateParams> = {
    instructions: 'You are Codex.',
    input: input as ResponseCreateParams['input'],
    tools: [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: { command: { type: 'string' } } }, strict: false }],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: false,
    include: ['reasoning.encrypted_content'],
  };
  return parseResponsesRequest(Buffer.from(JSON.stringify({ model: 'codex-model', ...body })));
}

function callIdOf(output: Record<string, unknown>[]): string {
  return String(output.find((item) => item.type === 'function_call')?.call_id);
}

/** The upstream body for the turn after the provider's `answer` and the tool's output. */
function nextTurnBody(provider: Provider, answer: unknown): Record<string, unknown> {
  const first = [{ role: 'user', content: 'List the files.' }];
  const response = chatResponseToResponses(provider.chat(TEST_CHANNEL, 'm').response(answer), codexRequest(first), USAGE);
  const output = response.output as Record<string, unknown>[];
  const next = codexRequest([...first, ...output, { type: 'function_call_output', call_id: callIdOf(output), output: 'a.txt\nb.txt' }]);
  return JSON.parse(provider.chat(channel, 'upstream-model').request(chatRequestFromResponses(next)).body.toString()) as Record<string, unknown>;
}

describe('a Codex tool round trip through a translated channel', () => {
  it('gives Claude back its signed thinking before its tool call, so thinking stays on', () => {
    const answer = {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'I should run ls.', signature: 'EqQBCkgIARAB' },
        { type: 'tool_use', id: 'toolu_01', name: 'shell', input: { command: 'ls' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    const body = nextTurnBody(anthropicProvider, answer);
    expect(body.thinking).toMatchObject({ type: 'enabled' });
    expect(body.system).toBe('You are Codex.');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should run ls.', signature: 'EqQBCkgIARAB' },
          { type: 'tool_use', id: 'toolu_01', name: 'shell', input: { command: 'ls' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.txt\nb.txt' }] },
    ]);
  });

  it('gives Gemini back the thought signature of its function call', () => {
    const answer = {
      responseId: 'gem-1',
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'I should run ls.', thought: true },
              { functionCall: { name: 'shell', args: { command: 'ls' } }, thoughtSignature: 'CiQBVKhc' },
            ],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    };
    const body = nextTurnBody(geminiProvider, answer);
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'List the files.' }] },
      { role: 'model', parts: [{ functionCall: { name: 'shell', args: { command: 'ls' } }, thoughtSignature: 'CiQBVKhc' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'shell', response: { content: 'a.txt\nb.txt' } } }] },
    ]);
  });
});
