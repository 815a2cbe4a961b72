// docs/api.md 2.10: a native Responses stream, event by event, as the relay passes it on: bytes
// unchanged but for the response's `model`, usage read from its last event, upstream failures
// (`error`, `response.failed`) turned into the relay's own `response.failed`.
import { AppError } from '@modelgate/errors';
import { StreamEventError } from '../src/features/relay/event-stream';
import type { SseEvent } from '../src/core/provider';
import { ResponsesPassThrough, ResponsesPassThroughStream, usageFromResponses } from '../src/dialects/responses/pass-through';
import type { ResponsesBody } from '../src/dialects/responses/request';
import { thrownBy } from './thrown';

const MODEL = 'gpt-5';
const PROMPT_TOKENS = 7;

function stream(): ResponsesPassThroughStream {
  const body = { model: MODEL, input: 'hi', stream: true } as ResponsesBody;
  return new ResponsesPassThroughStream(new ResponsesPassThrough(body, Buffer.from(JSON.stringify(body)), true, 'req-1', () => PROMPT_TOKENS, []));
}

/** An upstream event as OpenAI frames it (or without its `event:` line). */
function event(payload: Record<string, unknown>, named = true): SseEvent {
  const data = JSON.stringify(payload);
  const type = String(payload.type);
  return { raw: `${named ? `event: ${type}\n` : ''}data: ${data}\n\n`, data, event: named ? type : null };
}

const response = (fields: Record<string, unknown> = {}) => ({ id: 'resp_up1', object: 'response', created_at: 1, status: 'in_progress', model: 'gpt-5-2025-08-07', output: [], usage: null, ...fields });
const USAGE = { input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 29 };
const delta = (text: string, sequence: number) => event({ type: 'response.output_text.delta', sequence_number: sequence, item_id: 'msg_1', output_index: 0, content_index: 0, delta: text, logprobs: [] });

/** The JSON of the `data:` line of the text the relay writes. */
function written(text: string | null): Record<string, unknown> {
  const data = text?.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data?.slice('data: '.length) ?? 'null') as Record<string, unknown>;
}

describe('usageFromResponses', () => {
  it('reads every count, cached and cache-write tokens within the input, reasoning within the output', () => {
    expect(usageFromResponses({ ...USAGE, input_tokens_details: { cached_tokens: 8, cache_write_tokens: 5 } })).toEqual({
      promptTokens: 20,
      completionTokens: 9,
      cachedTokens: 8,
      cacheWriteTokens: 5,
      reasoningTokens: 4,
    });
    expect(usageFromResponses({ input_tokens: 3, output_tokens: 2 })).toEqual({ promptTokens: 3, completionTokens: 2, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
  });

  it('cuts details larger than their total, and is undefined without believable totals', () => {
    expect(usageFromResponses({ input_tokens: 10, input_tokens_details: { cached_tokens: 8, cache_write_tokens: 5 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 9 } }))
      .toEqual({ promptTokens: 10, completionTokens: 2, cachedTokens: 8, cacheWriteTokens: 2, reasoningTokens: 2 });
    expect(usageFromResponses(null)).toBeUndefined();
    expect(usageFromResponses({ input_tokens: -1, output_tokens: 2 })).toBeUndefined();
    expect(usageFromResponses({ input_tokens: 1.5, output_tokens: 2 })).toBeUndefined();
  });
});

describe('ResponsesPassThroughStream', () => {
  it("writes every event's bytes as they came, rewriting the model only in the events carrying the response", () => {
    const dialect = stream();
    const created = event({ type: 'response.created', sequence_number: 0, response: response() });
    expect(written(dialect.onEvent(created))).toEqual({ type: 'response.created', sequence_number: 0, response: response({ model: MODEL }) });
    const same = event({ type: 'response.in_progress', sequence_number: 1, response: response({ model: MODEL }) });
    expect(dialect.onEvent(same)).toBe(same.raw);
    const piece = delta('Hi', 2);
    expect(dialect.onEvent(piece)).toBe(piece.raw);
    // An item whose own fields name a model is not the response: untouched.
    const added = event({ type: 'response.output_item.added', sequence_number: 3, output_index: 1, item: { type: 'function_call', name: 'get_weather', model: 'x' } });
    expect(dialect.onEvent(added)).toBe(added.raw);
    expect(dialect.done).toBe(false);
  });

  it('is done at response.completed, billed by its usage', () => {
    const dialect = stream();
    dialect.onEvent(delta('Hi', 0));
    const completed = dialect.onEvent(event({ type: 'response.completed', sequence_number: 1, response: response({ status: 'completed', usage: USAGE }) }));
    expect(written(completed)).toMatchObject({ response: { model: MODEL, usage: USAGE } });
    expect(dialect).toMatchObject({ done: true, sawUsage: true });
    expect(dialect.billedUsage()).toEqual({ promptTokens: 20, completionTokens: 9, cachedTokens: 8, cacheWriteTokens: 0, reasoningTokens: 4 });
    expect(dialect.tail()).toBe('');
  });

  it('counts the prompt and the delivered pieces when response.incomplete has no usage, and writes the count into it', () => {
    const dialect = stream();
    dialect.onEvent(event({ type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: { type: 'function_call', name: 'lookup', arguments: '' } }));
    dialect.onEvent(event({ type: 'response.function_call_arguments.delta', sequence_number: 1, item_id: 'fc_1', output_index: 0, delta: '{"q":' }));
    dialect.onEvent(delta(' hello world', 2));
    const incomplete = written(dialect.onEvent(event({ type: 'response.incomplete', sequence_number: 3, response: response({ status: 'incomplete', model: MODEL }) })));
    const billed = dialect.billedUsage();
    expect(billed.promptTokens).toBe(PROMPT_TOKENS);
    expect(billed.completionTokens).toBeGreaterThanOrEqual(4);
    expect(incomplete).toMatchObject({ response: { usage: { input_tokens: PROMPT_TOKENS, output_tokens: billed.completionTokens } } });
    expect(dialect).toMatchObject({ done: true, sawUsage: false });
  });

  it('reads the type from the data when the upstream sends no event: lines', () => {
    const dialect = stream();
    expect(written(dialect.onEvent(event({ type: 'response.created', sequence_number: 0, response: response() }, false)))).toMatchObject({ response: { model: MODEL } });
    const piece = { ...delta('Hi', 1), event: null };
    expect(dialect.onEvent(piece)).toBe(piece.raw);
    dialect.onEvent(event({ type: 'response.completed', sequence_number: 2, response: response({ status: 'completed', usage: USAGE }) }, false));
    expect(dialect.done).toBe(true);
  });

  it.each([
    ['an error event (OpenAI nests the error)', { type: 'error', sequence_number: 2, error: { type: 'server_error', code: 'server_error', message: 'boom', param: null } }],
    ['an error event (the published schema)', { type: 'error', sequence_number: 2, code: 'server_error', message: 'boom', param: null }],
    ['response.failed', { type: 'response.failed', sequence_number: 2, response: response({ status: 'failed', error: { code: 'server_error', message: 'boom' } }) }],
  ])('turns %s into a stream failure in the upstream words', (_name, payload) => {
    const dialect = stream();
    dialect.onEvent(event({ type: 'response.created', sequence_number: 0, response: response() }));
    const failure = thrownBy(() => dialect.onEvent(event(payload)));
    expect(failure).toBeInstanceOf(StreamEventError);
    expect((failure as Error).message).toBe('upstream error: boom');
  });

  it('refuses a lifecycle event without a response object', () => {
    expect(thrownBy(() => stream().onEvent(event({ type: 'response.completed', sequence_number: 0 })))).toBeInstanceOf(StreamEventError);
  });

  it("ends a failed stream with response.failed about the upstream's response, numbered after the events passed on, without output", () => {
    const dialect = stream();
    dialect.onEvent(event({ type: 'response.created', sequence_number: 0, response: response() }));
    dialect.onEvent(delta('Hi', 1));
    const failed = dialect.errorTail(new AppError('upstream_error', 'upstream stream failed'));
    expect(failed.startsWith('event: response.failed\ndata: ')).toBe(true);
    const payload = written(failed);
    expect(payload).toEqual({
      type: 'response.failed',
      sequence_number: 2,
      response: {
        id: 'resp_up1',
        object: 'response',
        created_at: 1,
        status: 'failed',
        model: MODEL,
        usage: null,
        error: { code: 'server_error', message: 'upstream stream failed (request id: req-1)' },
      },
    });
  });

  it('tells the client when the upstream ended without its last event', () => {
    const dialect = stream();
    dialect.onEvent(delta('Hi', 0));
    expect(written(dialect.tail())).toMatchObject({ type: 'response.failed', sequence_number: 1, response: { id: 'resp_req-1', status: 'failed', model: MODEL } });
  });
});
