// A whole internal answer as the Responses `response` object (docs/api.md 2.10): the output items in
// the answer's order, usage, status, the request's parameters echoed; and the reasoning a client
// keeps (encrypted_content) read back by the request converter as the parts it came from.
import type { Response, ResponseCreateParams } from 'openai/resources/responses/responses';
import { parseResponsesRequest, type ResponsesBody } from '../../src/dialects/responses/request';
import type { ChatResponse, ChatUsage, ContentPart, FinishReason } from '../../src/core/chat';
import { chatRequestFromResponses } from '../../src/dialects/responses/to-internal';
import { chatResponseToResponses } from '../../src/dialects/responses/from-internal';

const CREATED = 1_760_000_000;

/** A parsed request; `input` may hold output items as a stateless client sends them back. */
function body(fields: Omit<Partial<ResponseCreateParams>, 'input'> & { input?: unknown } = {}): ResponsesBody {
  return parseResponsesRequest(Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', input: 'hi', ...fields })));
}

function answer(content: ContentPart[], finishReason: FinishReason = 'stop', id = 'msg_01XYZ'): ChatResponse {
  return { id, created: CREATED, choices: [{ index: 0, content, finishReason }] };
}

const USAGE: ChatUsage = { promptTokens: 120, completionTokens: 45, cachedTokens: 100, cacheWriteTokens: 15, reasoningTokens: 20 };

const THOUGHT: ContentPart = { type: 'reasoning', text: 'Paris first.', signature: 'EqQBCkgIAR' };
const REDACTED: ContentPart = { type: 'redacted_reasoning', data: 'EmwKAhgB' };
const CALL_PARIS: ContentPart = { type: 'tool_call', id: 'toolu_paris', name: 'weather', arguments: '{"city":"Paris"}' };
const CALL_ROME: ContentPart = { type: 'tool_call', id: 'toolu_rome', name: 'weather', arguments: '{"city":"Rome"}' };

function output(response: Record<string, unknown>): Record<string, unknown>[] {
  return response.output as Record<string, unknown>[];
}

/** The reasoning item at `index` of the output of answer msg_01XYZ: its summary ('' for none), its encrypted_content if any. */
function reasoningItem(index: number, summary: string, encrypted?: string): Record<string, unknown> {
  return {
    id: `rs_msg_01XYZ_${index}`,
    type: 'reasoning',
    summary: summary === '' ? [] : [{ type: 'summary_text', text: summary }],
    ...(encrypted === undefined ? {} : { encrypted_content: encrypted }),
  };
}

describe('chatResponseToResponses', () => {
  it('writes a text answer as OpenAI does, echoing the defaults of an unset request', () => {
    expect(chatResponseToResponses(answer([{ type: 'text', text: 'Hello!' }]), body(), USAGE)).toEqual<Response | Record<string, unknown>>({
      id: 'resp_msg_01XYZ',
      object: 'response',
      created_at: CREATED,
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'claude-sonnet-4-5',
      output: [
        {
          id: 'msg_msg_01XYZ_0',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello!' }],
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: null,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      truncation: 'disabled',
      usage: {
        input_tokens: 120,
        input_tokens_details: { cached_tokens: 100, cache_write_tokens: 15 },
        output_tokens: 45,
        output_tokens_details: { reasoning_tokens: 20 },
        total_tokens: 165,
      },
      user: null,
      metadata: {},
    });
  });

  it("keeps the answer's order: reasoning, text, function calls, with ids made from the upstream id and the item's place", () => {
    const response = chatResponseToResponses(
      answer([THOUGHT, { type: 'text', text: 'Checking ' }, { type: 'text', text: 'both.' }, CALL_PARIS, CALL_ROME], 'tool_calls'),
      body(),
      USAGE,
    );
    expect(response.status).toBe('completed');
    expect(output(response)).toEqual([
      reasoningItem(0, 'Paris first.'),
      {
        id: 'msg_msg_01XYZ_1',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Checking both.' }],
      },
      { id: 'fc_msg_01XYZ_2', type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'toolu_paris', name: 'weather' },
      { id: 'fc_msg_01XYZ_3', type: 'function_call', status: 'completed', arguments: '{"city":"Rome"}', call_id: 'toolu_rome', name: 'weather' },
    ]);
  });

  it('joins unsigned reasoning until a signature ends it, as a stream would (Gemini thought parts)', () => {
    const response = chatResponseToResponses(
      answer([
        { type: 'reasoning', text: 'Step one. ' },
        { type: 'reasoning', text: 'Step two.', signature: 'CiQB' },
        { type: 'reasoning', text: '', signature: 'CiQC' },
        CALL_PARIS,
      ]),
      body({ include: ['reasoning.encrypted_content'] }),
      USAGE,
    );
    expect(output(response).slice(0, 2)).toEqual([
      reasoningItem(0, 'Step one. Step two.', 'modelgate.signature:CiQB'),
      reasoningItem(1, '', 'modelgate.signature:CiQC'),
    ]);
  });

  it('carries signatures and redacted reasoning in encrypted_content only when the client includes it', () => {
    const content = [THOUGHT, REDACTED, { type: 'text' as const, text: 'Done.' }];
    expect(output(chatResponseToResponses(answer(content), body(), USAGE)).slice(0, 2)).toEqual([
      reasoningItem(0, 'Paris first.'),
      reasoningItem(1, ''),
    ]);
    expect(output(chatResponseToResponses(answer(content), body({ include: ['reasoning.encrypted_content'] }), USAGE)).slice(0, 2)).toEqual([
      reasoningItem(0, 'Paris first.', 'modelgate.signature:EqQBCkgIAR'),
      reasoningItem(1, '', 'modelgate.redacted:EmwKAhgB'),
    ]);
  });

  it('gives back the parts it was made of when a stateless client sends the output as the next input (Codex)', () => {
    const content: ContentPart[] = [THOUGHT, REDACTED, { type: 'text', text: 'Checking.' }, CALL_PARIS, CALL_ROME];
    const response = chatResponseToResponses(answer(content, 'tool_calls'), body({ include: ['reasoning.encrypted_content'] }), USAGE);
    const input = [
      { role: 'user', content: 'Weather?' },
      ...output(response),
      { type: 'function_call_output', call_id: 'toolu_paris', output: '18C' },
    ];
    expect(chatRequestFromResponses(body({ input })).messages.slice(1, 2)).toEqual([{ role: 'assistant', content }]);
  });

  it.each<[FinishReason, string, Record<string, unknown> | null]>([
    ['stop', 'completed', null],
    ['tool_calls', 'completed', null],
    ['length', 'incomplete', { reason: 'max_output_tokens' }],
    ['content_filter', 'incomplete', { reason: 'content_filter' }],
  ])('finish reason %s: status %s', (finishReason, status, details) => {
    const response = chatResponseToResponses(answer([THOUGHT, { type: 'text', text: 'Cut sho' }], finishReason), body(), USAGE);
    expect(response).toMatchObject({ status, incomplete_details: details });
    // The item the answer stopped in is the incomplete one.
    expect(output(response)[1]?.status).toBe(details === null ? 'completed' : 'incomplete');
  });

  it('counts total tokens as input plus output, cached and cache-write tokens inside the input', () => {
    const usage: ChatUsage = { promptTokens: 10, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    expect(chatResponseToResponses(answer([]), body(), usage).usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 10,
    });
  });

  it("echoes the request's parameters, function tools only (the model was offered no others)", () => {
    const echoed = {
      instructions: 'Be brief.',
      max_output_tokens: 500,
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.8,
      tool_choice: { type: 'function', name: 'shell' },
      text: { format: { type: 'json_object' }, verbosity: 'low' },
      reasoning: { effort: 'high', summary: 'auto' },
      truncation: 'auto',
      metadata: { session: 's1' },
      user: 'u-1',
    } as const;
    const request = body({
      ...echoed,
      tools: [{ type: 'web_search' }, { type: 'function', name: 'shell', parameters: { type: 'object' }, strict: false }],
      store: true,
    });
    expect(chatResponseToResponses(answer([]), request, USAGE)).toMatchObject({
      ...echoed,
      tools: [{ type: 'function', name: 'shell', description: null, parameters: { type: 'object' }, strict: false }],
      store: false,
      previous_response_id: null,
    });
  });

  it('keeps an upstream id that already is a response id, and answers an answer without choices with no output', () => {
    const response = chatResponseToResponses({ id: 'resp_abc', created: CREATED, choices: [] }, body(), USAGE);
    expect(response).toMatchObject({ id: 'resp_abc', status: 'completed', output: [] });
  });
});
