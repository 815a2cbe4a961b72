// Internal stream events written as the Responses SSE sequence (docs/api.md 2.10), each at once:
// the exact events for text, reasoning, tool calls, their interleaving, an answer cut short and an
// upstream failure; and the official SDK's stream handling assembling from them the very response
// object the whole answer gives.
import { AppError } from '@modelgate/errors';
import { Stream } from 'openai/core/streaming';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { maybeParseResponse } from 'openai/lib/ResponsesParser';
import type { ResponseCreateParams, ResponseStreamEvent, Response as OpenAIResponse } from 'openai/resources/responses/responses';
import { SseParser } from '../../src/features/upstream/sse';
import { parseResponsesRequest, type ResponsesBody } from '../../src/dialects/responses/request';
import type { ChatStreamEvent, ChatUsage, ContentPart, FinishReason } from '../../src/core/chat';
import { chatResponseToResponses } from '../../src/dialects/responses/from-internal';
import { ResponsesEventEncoder } from '../../src/dialects/responses/event-encoder';

const CREATED = 1_760_000_000;
const USAGE: ChatUsage = { promptTokens: 120, completionTokens: 45, cachedTokens: 100, cacheWriteTokens: 0, reasoningTokens: 20 };

function body(fields: Partial<ResponseCreateParams> = {}): ResponsesBody {
  return parseResponsesRequest(Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', input: 'hi', stream: true, ...fields })));
}

const START: ChatStreamEvent = { type: 'start', id: 'msg_01XYZ', created: CREATED };

function text(value: string): ChatStreamEvent {
  return { type: 'text', choice: 0, text: value };
}

function reasoning(value: string): ChatStreamEvent {
  return { type: 'reasoning', choice: 0, text: value };
}

function call(index: number, id: string, args = ''): ChatStreamEvent {
  return { type: 'tool_call', choice: 0, index, id, name: 'weather', arguments: args };
}

function args(index: number, piece: string): ChatStreamEvent {
  return { type: 'tool_call_arguments', choice: 0, index, arguments: piece };
}

function finish(reason: FinishReason): ChatStreamEvent {
  return { type: 'finish', choice: 0, reason };
}

/** The bytes a client receives: every event encoded as it comes, then the tail. */
function encodeAll(events: ChatStreamEvent[], request = body(), usage = USAGE): string {
  const encoder = new ResponsesEventEncoder({ body: request, requestId: 'req-1' });
  return events.map((event) => encoder.encode(event)).join('') + encoder.tail(usage);
}

type WireEvent = Record<string, unknown> & { type: string; sequence_number: number };

/** The events of SSE text, each checked to be framed as OpenAI frames it: `event:` names its type. */
function eventsOf(text: string): WireEvent[] {
  const parser = new SseParser();
  return [...parser.push(Buffer.from(text)), ...parser.end()].map((sse) => {
    const event = JSON.parse(sse.data ?? '') as WireEvent;
    expect(sse.event).toBe(event.type);
    return event;
  });
}

/** One line per event: its type, output index and what it carries, for exact sequence checks. */
function brief(event: WireEvent): string {
  const words: string[] = [event.type];
  if (typeof event.output_index === 'number') words.push(`#${event.output_index}`);
  const item = event.item as Record<string, unknown> | undefined;
  if (item) words.push(`${String(item.type)}${item.status ? `/${String(item.status)}` : ''}`);
  for (const field of ['delta', 'text', 'arguments'] as const) {
    if (typeof event[field] === 'string') words.push(JSON.stringify(event[field]));
  }
  const response = event.response as Record<string, unknown> | undefined;
  if (response) words.push(String(response.status));
  return words.join(' ');
}

function briefs(text: string): string[] {
  return eventsOf(text).map(brief);
}

const OPENING = ['response.created in_progress', 'response.in_progress in_progress'];

describe('ResponsesEventEncoder', () => {
  it('writes a text answer event by event, exactly as OpenAI frames it', () => {
    const events = eventsOf(encodeAll([START, text('Hel'), text('lo'), finish('stop')]));
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const item = { item_id: 'msg_msg_01XYZ_0', output_index: 0 };
    expect(events.slice(2, -1)).toEqual([
      {
        type: 'response.output_item.added',
        sequence_number: 2,
        output_index: 0,
        item: { id: 'msg_msg_01XYZ_0', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      },
      {
        type: 'response.content_part.added',
        sequence_number: 3,
        ...item,
        content_index: 0,
        part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
      },
      { type: 'response.output_text.delta', sequence_number: 4, ...item, content_index: 0, delta: 'Hel', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, ...item, content_index: 0, delta: 'lo', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, ...item, content_index: 0, text: 'Hello', logprobs: [] },
      {
        type: 'response.content_part.done',
        sequence_number: 7,
        ...item,
        content_index: 0,
        part: { type: 'output_text', annotations: [], logprobs: [], text: 'Hello' },
      },
      {
        type: 'response.output_item.done',
        sequence_number: 8,
        output_index: 0,
        item: {
          id: 'msg_msg_01XYZ_0',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello' }],
        },
      },
    ]);
    const whole = chatResponseToResponses(
      { id: 'msg_01XYZ', created: CREATED, choices: [{ index: 0, content: [{ type: 'text', text: 'Hello' }], finishReason: 'stop' }] },
      body(),
      USAGE,
    );
    expect(events[0]).toEqual({
      type: 'response.created',
      sequence_number: 0,
      response: { ...whole, status: 'in_progress', output: [], usage: null },
    });
    expect(events[1]).toEqual({ ...events[0], type: 'response.in_progress', sequence_number: 1 });
    expect(events.at(-1)).toEqual({ type: 'response.completed', sequence_number: 9, response: whole });
  });

  it('writes reasoning as a reasoning item with one summary part, the signature in its encrypted_content when included', () => {
    const events = [START, reasoning('Paris '), reasoning('first.'), { type: 'reasoning_signature', choice: 0, signature: 'EqQB' } as const, text('Hi')];
    const wire = eventsOf(encodeAll(events, body({ include: ['reasoning.encrypted_content'] })));
    expect(wire.map(brief)).toEqual([
      ...OPENING,
      'response.output_item.added #0 reasoning',
      'response.reasoning_summary_part.added #0',
      'response.reasoning_summary_text.delta #0 "Paris "',
      'response.reasoning_summary_text.delta #0 "first."',
      'response.reasoning_summary_text.done #0 "Paris first."',
      'response.reasoning_summary_part.done #0',
      'response.output_item.done #0 reasoning',
      'response.output_item.added #1 message/in_progress',
      'response.content_part.added #1',
      'response.output_text.delta #1 "Hi"',
      'response.output_text.done #1 "Hi"',
      'response.content_part.done #1',
      'response.output_item.done #1 message/completed',
      'response.completed completed',
    ]);
    expect(wire[2]).toMatchObject({ item: { id: 'rs_msg_01XYZ_0', type: 'reasoning', summary: [] } });
    expect(wire[3]).toMatchObject({ item_id: 'rs_msg_01XYZ_0', summary_index: 0, part: { type: 'summary_text', text: '' } });
    expect(wire[7]).toMatchObject({ summary_index: 0, part: { type: 'summary_text', text: 'Paris first.' } });
    expect(wire[8]).toMatchObject({
      item: {
        id: 'rs_msg_01XYZ_0',
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Paris first.' }],
        encrypted_content: 'modelgate.signature:EqQB',
      },
    });
  });

  it('writes a tool call with its argument pieces, and a call whose arguments came whole', () => {
    const events = [START, call(0, 'call_a'), args(0, '{"city":'), args(0, '"Paris"}'), call(1, 'call_b', '{"city":"Rome"}'), finish('tool_calls')];
    expect(briefs(encodeAll(events))).toEqual([
      ...OPENING,
      'response.output_item.added #0 function_call/in_progress',
      'response.function_call_arguments.delta #0 "{\\"city\\":"',
      'response.function_call_arguments.delta #0 "\\"Paris\\"}"',
      'response.output_item.added #1 function_call/in_progress',
      'response.function_call_arguments.delta #1 "{\\"city\\":\\"Rome\\"}"',
      'response.function_call_arguments.done #0 "{\\"city\\":\\"Paris\\"}"',
      'response.output_item.done #0 function_call/completed',
      'response.function_call_arguments.done #1 "{\\"city\\":\\"Rome\\"}"',
      'response.output_item.done #1 function_call/completed',
      'response.completed completed',
    ]);
  });

  it('keeps parallel calls open together, so argument pieces an OpenAI-compatible server interleaves reach their call', () => {
    const events = [START, call(0, 'call_a'), call(1, 'call_b'), args(1, '{"city":"Rome"}'), args(0, '{"city":"Paris"}'), finish('tool_calls')];
    const wire = eventsOf(encodeAll(events));
    expect(wire.map(brief).slice(2, 6)).toEqual([
      'response.output_item.added #0 function_call/in_progress',
      'response.output_item.added #1 function_call/in_progress',
      'response.function_call_arguments.delta #1 "{\\"city\\":\\"Rome\\"}"',
      'response.function_call_arguments.delta #0 "{\\"city\\":\\"Paris\\"}"',
    ]);
    expect(wire.at(-1)).toMatchObject({
      response: {
        output: [
          { type: 'function_call', call_id: 'call_a', arguments: '{"city":"Paris"}' },
          { type: 'function_call', call_id: 'call_b', arguments: '{"city":"Rome"}' },
        ],
      },
    });
  });

  it('closes each item when another kind begins: reasoning, text, a call, more reasoning and text (Claude interleaved thinking)', () => {
    const events: ChatStreamEvent[] = [
      START,
      reasoning('Look it up.'),
      { type: 'reasoning_signature', choice: 0, signature: 'S1' },
      text('Checking.'),
      call(0, 'toolu_1', '{}'),
      reasoning('Now answer.'),
      { type: 'reasoning_signature', choice: 0, signature: 'S2' },
      { type: 'redacted_reasoning', choice: 0, data: 'R1' },
      text('Sunny.'),
      finish('stop'),
    ];
    const added = briefs(encodeAll(events)).filter((line) => line.startsWith('response.output_item.'));
    expect(added).toEqual([
      'response.output_item.added #0 reasoning',
      'response.output_item.done #0 reasoning',
      'response.output_item.added #1 message/in_progress',
      'response.output_item.done #1 message/completed',
      'response.output_item.added #2 function_call/in_progress',
      'response.output_item.done #2 function_call/completed',
      'response.output_item.added #3 reasoning',
      'response.output_item.done #3 reasoning',
      'response.output_item.added #4 reasoning',
      'response.output_item.done #4 reasoning',
      'response.output_item.added #5 message/in_progress',
      'response.output_item.done #5 message/completed',
    ]);
  });

  it.each<[FinishReason, string]>([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ])('ends an answer cut short (%s) with response.incomplete, the last item incomplete', (reason, why) => {
    const wire = eventsOf(encodeAll([START, text('Cut sho'), finish(reason)]));
    expect(wire.map(brief).slice(-2)).toEqual(['response.output_item.done #0 message/incomplete', 'response.incomplete incomplete']);
    expect(wire.at(-1)).toMatchObject({ response: { status: 'incomplete', incomplete_details: { reason: why } } });
  });

  it('ends a stream the upstream broke with response.failed, keeping what was generated', () => {
    const encoder = new ResponsesEventEncoder({ body: body(), requestId: 'req-1' });
    const sent = [START, text('Partial')].map((event) => encoder.encode(event)).join('');
    const failure = encoder.errorTail(new AppError('upstream_error', 'the upstream connection was reset'));
    expect(briefs(sent + failure).slice(-1)).toEqual(['response.failed failed']);
    expect(eventsOf(failure)).toEqual([
      {
        type: 'response.failed',
        sequence_number: 5,
        response: expect.objectContaining({
          id: 'resp_msg_01XYZ',
          status: 'failed',
          error: { code: 'server_error', message: 'the upstream connection was reset (request id: req-1)' },
          output: [expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text: 'Partial' })] })],
          usage: null,
        }),
      },
    ]);
  });

  it('opens the response before anything else even when the first event is not start, and for an empty stream', () => {
    expect(briefs(encodeAll([text('Hi')])).slice(0, 3)).toEqual([...OPENING, 'response.output_item.added #0 message/in_progress']);
    expect(eventsOf(encodeAll([text('Hi')]))[0]).toMatchObject({ response: { id: 'resp_req-1' } });
    expect(briefs(encodeAll([]))).toEqual([...OPENING, 'response.completed completed']);
  });

  it('writes nothing for usage, finish, other choices and empty pieces, and merges the usage it saw', () => {
    const encoder = new ResponsesEventEncoder({ body: body(), requestId: 'req-1' });
    encoder.encode(START);
    const quiet: ChatStreamEvent[] = [
      { type: 'usage', usage: { promptTokens: 10 } },
      { type: 'usage', usage: { completionTokens: 3, reasoningTokens: 1 } },
      finish('stop'),
      { type: 'text', choice: 1, text: 'other choice' },
      text(''),
      reasoning(''),
    ];
    expect(quiet.map((event) => encoder.encode(event)).join('')).toBe('');
    expect(encoder.usage()).toEqual({ promptTokens: 10, completionTokens: 3, reasoningTokens: 1 });
  });

  it('reports every generated piece it sent, for counting when the provider reports no usage', () => {
    const encoder = new ResponsesEventEncoder({ body: body(), requestId: 'req-1' });
    [START, reasoning('Think.'), text('Hi'), call(0, 'c', '{"a":'), args(0, '1}')].forEach((event) => encoder.encode(event));
    expect(encoder.deliveredText()).toEqual(['Think.', 'Hi', 'weather', '{"a":', '1}']);
  });
});

/** What the official SDK assembles from a stream, as an application using it sees it. */
async function throughSdk(text: string): Promise<OpenAIResponse> {
  const stream = Stream.fromSSEResponse<ResponseStreamEvent>(new Response(text), new AbortController());
  return ResponseStream.fromReadableStream(stream.toReadableStream()).finalResponse();
}

describe('the openai SDK reading the stream', () => {
  const content: ContentPart[] = [
    { type: 'reasoning', text: 'Paris first.', signature: 'EqQB' },
    { type: 'text', text: 'Checking both.' },
    { type: 'tool_call', id: 'toolu_paris', name: 'weather', arguments: '{"city":"Paris"}' },
    { type: 'tool_call', id: 'toolu_rome', name: 'weather', arguments: '{"city":"Rome"}' },
  ];
  const events: ChatStreamEvent[] = [
    START,
    reasoning('Paris '),
    reasoning('first.'),
    { type: 'reasoning_signature', choice: 0, signature: 'EqQB' },
    text('Checking'),
    text(' both.'),
    call(0, 'toolu_paris'),
    args(0, '{"city":'),
    args(0, '"Paris"}'),
    call(1, 'toolu_rome', '{"city":"Rome"}'),
    finish('tool_calls'),
    { type: 'usage', usage: USAGE },
  ];

  /** The stream's final response gets the SDK's parsed-output fields; the whole answer is given the same. */
  async function expectSameResponse(streamed: ChatStreamEvent[], whole: ContentPart[], reason: FinishReason, request: ResponsesBody) {
    const final = await throughSdk(encodeAll(streamed, request));
    const answer = { id: 'msg_01XYZ', created: CREATED, choices: [{ index: 0, content: whole, finishReason: reason }] };
    const expected = chatResponseToResponses(answer, request, USAGE);
    expect(final).toEqual(maybeParseResponse(expected as unknown as OpenAIResponse, null));
    return final;
  }

  it.each([
    [
      'with encrypted reasoning',
      body({ include: ['reasoning.encrypted_content'], tools: [{ type: 'function', name: 'weather', parameters: { type: 'object' }, strict: false }] }),
    ],
    ['without', body()],
  ])('assembles the response the whole answer gives: reasoning, text, calls (%s)', async (_, request) => {
    const final = await expectSameResponse(events, content, 'tool_calls', request);
    expect(final.output_text).toBe('Checking both.');
  });

  const withEncrypted = body({ include: ['reasoning.encrypted_content'] });

  it.each<[string, ChatStreamEvent[], ContentPart[]]>([
    [
      'Claude interleaved thinking and redacted thinking',
      [
        START,
        reasoning('Look.'),
        { type: 'reasoning_signature', choice: 0, signature: 'S1' },
        call(0, 'toolu_1', '{}'),
        reasoning('Answer.'),
        { type: 'reasoning_signature', choice: 0, signature: 'S2' },
        { type: 'redacted_reasoning', choice: 0, data: 'R1' },
        text('Sunny.'),
      ],
      [
        { type: 'reasoning', text: 'Look.', signature: 'S1' },
        { type: 'tool_call', id: 'toolu_1', name: 'weather', arguments: '{}' },
        { type: 'reasoning', text: 'Answer.', signature: 'S2' },
        { type: 'redacted_reasoning', data: 'R1' },
        { type: 'text', text: 'Sunny.' },
      ],
    ],
    [
      'Gemini thought parts, the signature arriving with the call',
      [START, reasoning('One. '), reasoning('Two.'), { type: 'reasoning_signature', choice: 0, signature: 'G1' }, call(0, 'g_1', '{"city":"Paris"}')],
      [
        { type: 'reasoning', text: 'One. ' },
        { type: 'reasoning', text: 'Two.', signature: 'G1' },
        { type: 'tool_call', id: 'g_1', name: 'weather', arguments: '{"city":"Paris"}' },
      ],
    ],
    [
      'parallel calls whose argument pieces interleave',
      [START, call(0, 'call_a'), call(1, 'call_b'), args(1, '{"city":"Rome"}'), args(0, '{"city":"Paris"}')],
      [
        { type: 'tool_call', id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
      ],
    ],
  ])('assembles the response the whole answer gives: %s', async (_, streamed, whole) => {
    await expectSameResponse(streamed, whole, 'stop', withEncrypted);
  });

  it.each<[string, FinishReason | undefined, string]>([
    ['an answer cut short', 'length', 'incomplete'],
    ['a failure', undefined, 'failed'],
  ])('ends with the response of %s', async (_, reason, status) => {
    const encoder = new ResponsesEventEncoder({ body: body(), requestId: 'req-1' });
    let text = [START, reasoning('Hm.'), { type: 'text', choice: 0, text: 'Cut' } as const].map((event) => encoder.encode(event)).join('');
    text += reason === undefined ? encoder.errorTail(new AppError('upstream_error', 'reset')) : encoder.encode(finish(reason)) + encoder.tail(USAGE);
    const final = await throughSdk(text);
    expect(final).toMatchObject({ status, output: [{ type: 'reasoning' }, { type: 'message', content: [{ text: 'Cut' }] }] });
  });
});
