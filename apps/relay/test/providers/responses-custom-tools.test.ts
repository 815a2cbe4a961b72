// Custom (free-form) tools of a Responses request on a translated channel (docs/api.md 2.10), as
// Codex sends its apply_patch tool: offered as a function of one string argument `input`, a call of
// it answered as a `custom_tool_call` (whole, and streamed with the custom input events, the input
// decoded from the argument pieces as they come), and sent back in history as a tool call and a
// tool result the providers receive.
import { Stream } from 'openai/core/streaming';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { maybeParseResponse } from 'openai/lib/ResponsesParser';
import type { ResponseStreamEvent, Response as OpenAIResponse } from 'openai/resources/responses/responses';
import { SseParser } from '../../src/features/upstream/sse';
import { parseResponsesRequest, type ResponsesBody } from '../../src/dialects/responses/request';
import type { ChatStreamEvent, ChatUsage, ContentPart } from '../../src/core/chat';
import type { Provider } from '../../src/core/provider';
import { anthropicProvider } from '../../src/providers/anthropic';
import { geminiProvider } from '../../src/providers/gemini';
import { CustomInputDecoder, inputOfArguments } from '../../src/dialects/responses/custom-tools';
import { chatRequestFromResponses } from '../../src/dialects/responses/to-internal';
import { chatResponseToResponses } from '../../src/dialects/responses/from-internal';
import { ResponsesEventEncoder } from '../../src/dialects/responses/event-encoder';

const CREATED = 1_760_000_000;
const USAGE: ChatUsage = { promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
const CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF';
/** Codex's freeform apply_patch tool, its grammar shortened. */
const APPLY_PATCH = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
  format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR },
};
const SHELL = { type: 'function', name: 'shell', parameters: { type: 'object', properties: { command: { type: 'string' } } }, strict: false };
const PATCH = '*** Begin Patch\n*** Update File: a.py\n@@\n-print("old")\n+print("new \u00e9 \u{1f600}")\n*** End Patch';

function body(fields: Record<string, unknown> = {}): ResponsesBody {
  return parseResponsesRequest(Buffer.from(JSON.stringify({ model: 'gpt-5-codex', input: 'hi', tools: [APPLY_PATCH, SHELL], ...fields })));
}

function callPart(name: string, args: string, id = 'toolu_1'): ContentPart {
  return { type: 'tool_call', id, name, arguments: args };
}

function answer(content: ContentPart[]) {
  return { id: 'msg_01', created: CREATED, choices: [{ index: 0, content, finishReason: 'tool_calls' as const }] };
}

/** Every way to cut `text` in two, and every character apart. */
function splits(text: string): string[][] {
  const cuts = Array.from({ length: text.length + 1 }, (_, at) => [text.slice(0, at), text.slice(at)]);
  return [...cuts, [...text]];
}

describe('CustomInputDecoder', () => {
  const args = JSON.stringify({ input: PATCH });
  /** The same arguments with the emoji and the accent escaped, as some models write them. */
  const escaped = args.replace('\u{1f600}', '\\ud83d\\ude00').replace('\u00e9', '\\u00e9');

  it('decodes the input string wherever the arguments are cut, never ending a piece on half a surrogate pair', () => {
    expect(escaped).toContain('\\ud83d\\ude00');
    for (const pieces of [...splits(args), ...splits(escaped)]) {
      const decoder = new CustomInputDecoder();
      const decoded = pieces.map((piece) => decoder.push(piece));
      decoded.push(decoder.finish());
      expect(decoded.join('')).toBe(PATCH);
      for (const piece of decoded) expect(/[\ud800-\udbff]$/.test(piece)).toBe(false);
    }
  });

  it('gives the input as it is generated', () => {
    const decoder = new CustomInputDecoder();
    expect(['{"inp', 'ut": "*** Begin', ' Patch\\', 'n*** End Patch"', '}'].map((piece) => decoder.push(piece))).toEqual([
      '',
      '*** Begin',
      ' Patch',
      '\n*** End Patch',
      '',
    ]);
    expect(decoder.finish()).toBe('');
  });

  it.each([
    ['escapes of every kind', String.raw`{"input":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`, 'a"b\\c/d\b\f\n\r\t\u00e9\u{1f600}'],
    ['other keys first, with nested values and strings that look like keys', '{"x":{"input":"no","y":[1,"}",{"z":"]"}]},"n":-1.5e3,"t":true,"input":"yes"}', 'yes'],
    ['an escaped key', String.raw`{"in\u0070ut":"yes"}`, 'yes'],
    ['whitespace everywhere', ' {\n "input" : "yes" \n} ', 'yes'],
    ['the first of two inputs', '{"input":"one","input":"two"}', 'one'],
    ['an input cut short', '{"input":"*** Begin Pa', '*** Begin Pa'],
  ])('reads %s', (_, args, input) => {
    expect(inputOfArguments(args)).toBe(input);
  });

  it.each([
    ['another argument (the model ignored the schema)', '{"city":"Paris"}'],
    ['an input that is not a string', '{"input":5}'],
    ['text that is not an object', '*** Begin Patch'],
    ['nothing', ''],
  ])('gives arguments without an input string as they are, at the end: %s', (_, args) => {
    const decoder = new CustomInputDecoder();
    expect(decoder.push(args)).toBe('');
    expect(decoder.finish()).toBe(args);
  });
});

describe('chatRequestFromResponses with custom tools', () => {
  it('offers a custom tool as a function of one string argument, its grammar in the argument, how to call it in the description', () => {
    const request = chatRequestFromResponses(body({ tools: [APPLY_PATCH, { type: 'custom', name: 'note' }, SHELL, { type: 'web_search' }] }));
    expect(request.tools).toEqual([
      {
        name: 'apply_patch',
        description: `${APPLY_PATCH.description}\n\nCall this tool with one argument, \`input\`: the raw input as a string.`,
        parameters: {
          type: 'object',
          properties: { input: { type: 'string', description: `The raw input. It must match this lark grammar:\n${GRAMMAR}` } },
          required: ['input'],
          additionalProperties: false,
        },
      },
      {
        name: 'note',
        description: 'Call this tool with one argument, `input`: the raw input as a string.',
        parameters: {
          type: 'object',
          properties: { input: { type: 'string', description: 'The raw input, as free-form text.' } },
          required: ['input'],
          additionalProperties: false,
        },
      },
      { name: 'shell', parameters: SHELL.parameters },
    ]);
  });

  it('forces the function of a custom tool choice', () => {
    expect(chatRequestFromResponses(body({ tool_choice: { type: 'custom', name: 'apply_patch' } })).toolChoice).toEqual({ name: 'apply_patch' });
  });

  it("reads Codex's custom tool call and its output (a string or content parts) as a tool call and a tool result", () => {
    const request = chatRequestFromResponses(
      body({
        input: [
          { role: 'user', content: 'Fix a.py' },
          { type: 'custom_tool_call', id: 'ctc_1', status: 'completed', call_id: 'call_1', name: 'apply_patch', input: PATCH },
          { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Success. Updated the following files:\nM a.py' },
          { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '' },
          { type: 'custom_tool_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'Nothing to do.' }] },
        ],
      }),
    );
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Fix a.py' }] },
      { role: 'assistant', content: [callPart('apply_patch', JSON.stringify({ input: PATCH }), 'call_1')] },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: 'Success. Updated the following files:\nM a.py' }] }] },
      { role: 'assistant', content: [callPart('apply_patch', '{"input":""}', 'call_2')] },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_2', content: [{ type: 'text', text: 'Nothing to do.' }] }] },
    ]);
  });
});

describe('chatResponseToResponses with custom tools', () => {
  it("answers a call of a custom tool's function as a custom_tool_call, its input the input argument; function calls stay", () => {
    const response = chatResponseToResponses(
      answer([callPart('apply_patch', JSON.stringify({ input: PATCH })), callPart('shell', '{"command":"ls"}', 'toolu_2'), callPart('apply_patch', '{"path":"a.py"}', 'toolu_3')]),
      body(),
      USAGE,
    );
    expect(response.output).toEqual([
      { id: 'ctc_msg_01_0', type: 'custom_tool_call', status: 'completed', call_id: 'toolu_1', input: PATCH, name: 'apply_patch' },
      { id: 'fc_msg_01_1', type: 'function_call', status: 'completed', arguments: '{"command":"ls"}', call_id: 'toolu_2', name: 'shell' },
      // Arguments without an input string go to the tool as they are.
      { id: 'ctc_msg_01_2', type: 'custom_tool_call', status: 'completed', call_id: 'toolu_3', input: '{"path":"a.py"}', name: 'apply_patch' },
    ]);
  });

  it('echoes custom tools as the client sent them', () => {
    expect(chatResponseToResponses(answer([]), body({ tools: [APPLY_PATCH, { type: 'web_search' }] }), USAGE).tools).toEqual([APPLY_PATCH]);
  });

  it('is a function call when the request has no custom tool of that name', () => {
    const response = chatResponseToResponses(answer([callPart('apply_patch', '{"input":"x"}')]), body({ tools: [SHELL] }), USAGE);
    expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', arguments: '{"input":"x"}' })]);
  });
});

/** The upstream body for the turn after the provider's `answer` and the patch tool's output. */
function nextTurnBody(provider: Provider, upstreamAnswer: unknown): Record<string, unknown> {
  const first = [{ role: 'user', content: 'Fix a.py' }];
  const request = body({ input: first, store: false });
  const response = chatResponseToResponses(provider.chat(CHANNEL, 'm').response(upstreamAnswer), request, USAGE);
  const output = response.output as Record<string, unknown>[];
  expect(output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: PATCH })]);
  const next = body({ input: [...first, ...output, { type: 'custom_tool_call_output', call_id: output[0]?.call_id, output: 'Done.' }], store: false });
  return JSON.parse(provider.chat(CHANNEL, 'upstream-model').request(chatRequestFromResponses(next)).body.toString()) as Record<string, unknown>;
}

describe('a Codex apply_patch round trip through a translated channel', () => {
  it("gives Claude back its tool_use with the input argument, then the tool's output", () => {
    const body = nextTurnBody(anthropicProvider, {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: 'toolu_01', name: 'apply_patch', input: { input: PATCH } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 10, output_tokens: 5 },
    });
    expect(body.tools).toEqual([
      expect.objectContaining({ name: 'apply_patch', input_schema: expect.objectContaining({ required: ['input'] }) }),
      expect.objectContaining({ name: 'shell' }),
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Fix a.py' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'apply_patch', input: { input: PATCH } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'Done.' }] },
    ]);
  });

  it('gives Gemini back its function call with the input argument, then the function response', () => {
    const body = nextTurnBody(geminiProvider, {
      responseId: 'gem-1',
      candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'apply_patch', args: { input: PATCH } } }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Fix a.py' }] },
      // Gemini's provider signs an unsigned call with the validator-skipping signature.
      { role: 'model', parts: [expect.objectContaining({ functionCall: { name: 'apply_patch', args: { input: PATCH } } })] },
      { role: 'user', parts: [{ functionResponse: { name: 'apply_patch', response: { content: 'Done.' } } }] },
    ]);
  });
});

const START: ChatStreamEvent = { type: 'start', id: 'msg_01', created: CREATED };

function call(index: number, id: string, name: string, args = ''): ChatStreamEvent {
  return { type: 'tool_call', choice: 0, index, id, name, arguments: args };
}

function args(index: number, piece: string): ChatStreamEvent {
  return { type: 'tool_call_arguments', choice: 0, index, arguments: piece };
}

function encodeAll(events: ChatStreamEvent[], request = body({ stream: true })): string {
  const encoder = new ResponsesEventEncoder({ body: request, requestId: 'req-1' });
  return events.map((event) => encoder.encode(event)).join('') + encoder.tail(USAGE);
}

type WireEvent = Record<string, unknown> & { type: string; sequence_number: number };

function eventsOf(text: string): WireEvent[] {
  const parser = new SseParser();
  return [...parser.push(Buffer.from(text)), ...parser.end()].map((sse) => {
    const event = JSON.parse(sse.data ?? '') as WireEvent;
    expect(sse.event).toBe(event.type);
    return event;
  });
}

/** The events after the response's opening, without sequence numbers, the last one's response apart. */
function itemEvents(text: string): Record<string, unknown>[] {
  return eventsOf(text)
    .slice(2, -1)
    .map(({ sequence_number: _, ...event }) => event);
}

async function throughSdk(text: string): Promise<OpenAIResponse> {
  const stream = Stream.fromSSEResponse<ResponseStreamEvent>(new Response(text), new AbortController());
  return ResponseStream.fromReadableStream(stream.toReadableStream()).finalResponse();
}

describe('ResponsesEventEncoder with custom tools', () => {
  const item = { id: 'ctc_msg_01_0', type: 'custom_tool_call', call_id: 'toolu_1', name: 'apply_patch' };
  const ref = { item_id: 'ctc_msg_01_0', output_index: 0 };

  it('streams a custom tool call as OpenAI does, its input decoded from the argument pieces as they come', () => {
    const events = [START, call(0, 'toolu_1', 'apply_patch', '{"input":"*** Begin'), args(0, ' Patch\\n'), args(0, '*** End Patch"}'), { type: 'finish', choice: 0, reason: 'tool_calls' } as const];
    const wire = encodeAll(events);
    expect(itemEvents(wire)).toEqual([
      { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', input: '' } },
      { type: 'response.custom_tool_call_input.delta', ...ref, delta: '*** Begin' },
      { type: 'response.custom_tool_call_input.delta', ...ref, delta: ' Patch\n' },
      { type: 'response.custom_tool_call_input.delta', ...ref, delta: '*** End Patch' },
      { type: 'response.custom_tool_call_input.done', ...ref, input: '*** Begin Patch\n*** End Patch' },
      { type: 'response.output_item.done', output_index: 0, item: { ...item, status: 'completed', input: '*** Begin Patch\n*** End Patch' } },
    ]);
    expect(eventsOf(wire).at(-1)).toMatchObject({ type: 'response.completed', response: { output: [{ ...item, input: '*** Begin Patch\n*** End Patch' }] } });
  });

  it('sends arguments without an input string whole when the call closes, before the next item', () => {
    const events = [START, call(0, 'toolu_1', 'apply_patch'), args(0, '{"city":'), args(0, '"Paris"}'), { type: 'text', choice: 0, text: 'Done.' } as const];
    expect(itemEvents(encodeAll(events)).slice(0, 5)).toEqual([
      { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', input: '' } },
      { type: 'response.custom_tool_call_input.delta', ...ref, delta: '{"city":"Paris"}' },
      { type: 'response.custom_tool_call_input.done', ...ref, input: '{"city":"Paris"}' },
      { type: 'response.output_item.done', output_index: 0, item: { ...item, status: 'completed', input: '{"city":"Paris"}' } },
      expect.objectContaining({ type: 'response.output_item.added', output_index: 1 }),
    ]);
  });

  it('keeps a custom call and a function call open together, each piece reaching its own call', () => {
    const events = [START, call(0, 'toolu_1', 'apply_patch'), call(1, 'toolu_2', 'shell'), args(1, '{"command":"ls"}'), args(0, '{"input":"x"}')];
    expect(
      eventsOf(encodeAll(events))
        .slice(2, -1)
        .map((event) => event.type),
    ).toEqual([
      'response.output_item.added',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ]);
  });

  it('counts the argument pieces as generated text, as a whole answer counts the arguments', () => {
    const encoder = new ResponsesEventEncoder({ body: body({ stream: true }), requestId: 'req-1' });
    [START, call(0, 'toolu_1', 'apply_patch', '{"input":"*** Begin'), args(0, ' Patch"}')].forEach((event) => encoder.encode(event));
    expect(encoder.deliveredText()).toEqual(['apply_patch', '{"input":"*** Begin', ' Patch"}']);
  });

  it.each<[string, ChatStreamEvent[], ContentPart[]]>([
    [
      'a patch in many pieces, then a shell call',
      [START, call(0, 'toolu_1', 'apply_patch'), ...[...JSON.stringify({ input: PATCH })].map((piece) => args(0, piece)), call(1, 'toolu_2', 'shell', '{"command":"ls"}')],
      [callPart('apply_patch', JSON.stringify({ input: PATCH })), callPart('shell', '{"command":"ls"}', 'toolu_2')],
    ],
    [
      'text, then a call without an input string',
      [START, { type: 'text', choice: 0, text: 'Patching.' }, call(0, 'toolu_1', 'apply_patch', '{"path":"a.py"}')],
      [{ type: 'text', text: 'Patching.' }, callPart('apply_patch', '{"path":"a.py"}')],
    ],
  ])('gives through the openai SDK the response the whole answer gives: %s', async (_, streamed, whole) => {
    const request = body({ stream: true });
    const final = await throughSdk(encodeAll(streamed, request));
    const expected = chatResponseToResponses({ ...answer(whole), choices: [{ index: 0, content: whole, finishReason: 'stop' }] }, request, USAGE);
    expect(final).toEqual(maybeParseResponse(expected as unknown as OpenAIResponse, null));
  });
});
