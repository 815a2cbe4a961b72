// docs/api.md 2.10: `POST /v1/responses` through the real relay with the openai SDK as the client,
// on each way a channel answers it: natively on an OpenAI channel, translated through chat
// completions (type 1 with settings.responses "chat"), Anthropic messages and Gemini contents.
import { consumeOtherView } from '@modelgate/schemas';
import { FAKE_TEXT_PIECE, FAKE_THOUGHT, FAKE_TOOL_ARGUMENTS } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { ANTHROPIC, CHAT_CHANNELS, expectKeyNotForwarded, GEMINI, OPENAI, recorded, settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';
import {
  named,
  NATIVE,
  respond,
  type ResponsesRoute,
  responsesUsage,
  ROUTES,
  streamResponse,
  TRANSLATED_ROUTES,
  VIA_ANTHROPIC,
  VIA_CHAT,
  withRoute,
} from './responses-support';

const INSTRUCTIONS = 'Be brief.';
const QUESTION = 'Say hello to me';
/** The fakes count one token per word: 2 + 4. */
const INPUT_TOKENS = 6;
const ANSWER = FAKE_TEXT_PIECE.repeat(5);
const WEATHER_TOOL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};
const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']);

relaySuite();

beforeEach(async () => {
  await resetSuite();
});

async function client() {
  const customer = await createCustomer(harness.prisma);
  return { customer, openai: openAiClient(harness, customer.key) };
}

/** The upstream request reached the route's path, with the channel's key and the mapped model. */
function expectUpstream(route: ResponsesRoute): void {
  const request = recorded(upstream.requests);
  const { key, upstreamModel } = CHAT_CHANNELS[route.type];
  expect(request.path.startsWith(route.path)).toBe(true);
  if (route.type === GEMINI) expect(request.path).toContain(upstreamModel);
  else expect(request.json.model).toBe(upstreamModel);
  if (route.type === OPENAI) expect(request.headers.authorization).toBe(`Bearer ${key}`);
}

describe.each(named(ROUTES))('/v1/responses on the %s channel', (_name, route) => {
  let model: string;
  beforeEach(async () => {
    model = await withRoute(route);
  });

  it('answers a plain call: output_text, status, the model the client asked for, usage as billed', async () => {
    const { customer, openai } = await client();
    const response = await openai.responses.create({ model, instructions: INSTRUCTIONS, input: QUESTION });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model, error: null, incomplete_details: null });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe(ANSWER);
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed', content: [expect.objectContaining({ type: 'output_text', text: ANSWER })] }),
    ]);
    expect(response.usage).toEqual(responsesUsage({ input: INPUT_TOKENS, output: 5 }));

    expectUpstream(route);
    expectKeyNotForwarded(recorded(upstream.requests), customer.key);
    expect(await settledConsumeRow(harness)).toMatchObject({ modelName: model, promptTokens: INPUT_TOKENS, completionTokens: 5, quota: -11n, isStream: false });
  });

  it('streams the Responses event sequence; response.completed carries the usage the ledger charged', async () => {
    const { openai } = await client();
    const { events, response } = await streamResponse(openai, { model, instructions: INSTRUCTIONS, input: QUESTION });
    const types = events.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.filter((type) => type === 'response.output_text.delta')).toHaveLength(5);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    for (const event of events) if ('response' in event) expect(event.response.model).toBe(model);

    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.usage).toEqual(responsesUsage({ input: INPUT_TOKENS, output: 5 }));
    expect(response).toMatchObject({ status: 'completed', output_text: ANSWER, model, id: completed.response.id });
    const request = recorded(upstream.requests);
    if (route.type === GEMINI) expect(request.url).toContain(':streamGenerateContent?alt=sse');
    else expect(request.json.stream).toBe(true);
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: INPUT_TOKENS, completionTokens: 5, quota: -11n, isStream: true });
  });

  it.each([['plain', false], ['streaming', true]])('%s: reasoning comes back as a reasoning item before the message', async (_mode, stream) => {
    const { openai } = await client();
    const response = await respond(openai, stream, { model, instructions: INSTRUCTIONS, input: QUESTION, reasoning: { effort: 'low' } });
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: FAKE_THOUGHT }] });
    expect(response.output_text).toBe(ANSWER);
    // Anthropic bills thinking inside output_tokens and reports no split.
    const reasoning = route.type === ANTHROPIC ? 0 : 3;
    expect(response.usage).toEqual(responsesUsage({ input: INPUT_TOKENS, output: 8, reasoning }));
    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ completionTokens: 8 });
    expect(consumeOtherView(row.other as Record<string, unknown>)).toMatchObject({ reasoning_tokens: reasoning });
  });

  it.each([['plain', false], ['streaming', true]])('%s: a function call round trip (function_call -> function_call_output -> text)', async (_mode, stream) => {
    const { openai } = await client();
    const first = await respond(openai, stream, { model, input: 'weather in Paris?', tools: [WEATHER_TOOL] });
    expect(first.status).toBe('completed');
    expect(first.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) })]);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.call_id).toEqual(expect.any(String));
    expect(first.usage?.output_tokens).toBe(10);

    const second = await respond(openai, stream, {
      model,
      tools: [WEATHER_TOOL],
      input: [
        { role: 'user', content: 'weather in Paris?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '{"temperature":21}' },
      ],
    });
    expect(second.output_text).toBe(ANSWER);
    expect(second.output.map((item) => item.type)).toEqual(['message']);
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => row.completionTokens)).toEqual([10, 5]);
    await expectLedgerInvariant(harness.prisma);
  });

  it('is incomplete when max_output_tokens cuts the answer', async () => {
    const { openai } = await client();
    const response = await openai.responses.create({ model, input: QUESTION, max_output_tokens: 2 });
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(response.output_text).toBe(FAKE_TEXT_PIECE.repeat(2));
  });
});

describe('natively on an OpenAI channel', () => {
  let model: string;
  beforeEach(async () => {
    model = await withRoute(NATIVE);
  });

  it('forwards the bytes untouched when the model is not mapped; previous_response_id and unknown fields reach the upstream', async () => {
    await harness.prisma.channel.updateMany({ data: { modelMapping: '' } });
    await harness.reloadCaches();
    const { customer } = await client();
    const body = Buffer.from(
      `{ "model": "${model}", "input": "caf\\u00e9 \u2615", "previous_response_id": "resp_earlier",\n` +
        ' "store": true, "prompt_cache_key": "codex-session", "vendor_extension": {"kept": [1, 2.0]} }',
    );
    const response = await fetch(`${harness.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ model, previous_response_id: 'resp_earlier' });
    expect(recorded(upstream.requests).body.equals(body)).toBe(true);
  });

  it('re-serialises once for a mapped model, keeping every field', async () => {
    const { openai } = await client();
    const extras = { previous_response_id: 'resp_earlier', store: false, include: ['reasoning.encrypted_content' as const], metadata: { trace: 'abc' } };
    const response = await openai.responses.create({ model, input: QUESTION, ...extras });
    expect(response).toMatchObject({ model, previous_response_id: 'resp_earlier' });
    expect(recorded(upstream.requests).json).toEqual({ model: CHAT_CHANNELS[OPENAI].upstreamModel, input: QUESTION, ...extras });
  });

  it('passes delta events on byte for byte; only events carrying the response get the client model', async () => {
    const { customer } = await client();
    const upstreamText = await (await fetch(`${upstream.url}/v1/responses`, {
      method: 'POST',
      body: JSON.stringify({ model: CHAT_CHANNELS[OPENAI].upstreamModel, input: QUESTION, stream: true }),
    })).text();
    upstream.requests.length = 0;
    const response = await fetch(`${harness.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: QUESTION, stream: true }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const relayed = (await response.text()).split('\n\n');
    // The fake numbers its answers: the relayed one is its next.
    const answer = Number(/resp_fake(\d+)/.exec(upstreamText)?.[1]);
    const expected = upstreamText.replaceAll(`fake${answer}"`, `fake${answer + 1}"`).split('\n\n');
    expect(relayed).toHaveLength(expected.length);
    relayed.forEach((event, index) => {
      const [name, data] = event.split('\n').map((line) => line.slice(line.indexOf(' ') + 1));
      if (LIFECYCLE.has(name ?? '')) expect((JSON.parse(data ?? '') as { response: { model: string } }).response.model).toBe(model);
      else expect(event).toBe(expected[index]);
    });
  });

  it('counts prompt and output when the upstream reports no usage, and says so in the answer', async () => {
    upstream.setMode('noUsage');
    const { openai } = await client();
    const response = await openai.responses.create({ model, input: QUESTION });
    const streamed = await streamResponse(openai, { model, input: QUESTION });
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 5, total_tokens: 9 });
    expect(streamed.response.usage).toMatchObject({ input_tokens: 4, output_tokens: 5, total_tokens: 9 });
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.promptTokens, row.completionTokens])).toEqual([[4, 5], [4, 5]]);
  });
});

describe.each(named(TRANSLATED_ROUTES))('stateless translation on the %s channel', (_name, route) => {
  it('refuses previous_response_id with a 400 naming it, before any upstream call', async () => {
    const model = await withRoute(route);
    const { openai } = await client();
    const failure = await openai.responses.create({ model, input: QUESTION, previous_response_id: 'resp_earlier' }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({ status: 400, param: 'previous_response_id', code: 'invalid_request' });
    expect(upstream.requests).toHaveLength(0);
    expect(await settledConsumeRows(harness)).toEqual([]);
    await expectLedgerInvariant(harness.prisma);
  });
});

describe.each(named(ROUTES))('background responses on the %s channel', (_name, route) => {
  it('refuses background: true with a 400 naming it, plain or streamed, before any upstream call; false is accepted', async () => {
    const model = await withRoute(route);
    const { openai } = await client();
    for (const stream of [false, true]) {
      const failure = await respond(openai, stream, { model, input: QUESTION, background: true }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
      expect(failure).toMatchObject({ status: 400, param: 'background', code: 'invalid_request', type: 'invalid_request_error' });
      expect((failure as Error).message).toMatch(/background responses are not supported/);
    }
    expect(upstream.requests).toHaveLength(0);
    expect(await settledConsumeRows(harness)).toEqual([]);

    await respond(openai, false, { model, input: QUESTION, background: false });
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('an OpenAI-compatible channel with settings.responses "chat"', () => {
  it('receives a chat completion request with the instructions as the system message', async () => {
    const model = await withRoute(VIA_CHAT);
    const { openai } = await client();
    await openai.responses.create({ model, instructions: INSTRUCTIONS, input: QUESTION, max_output_tokens: 100 });
    expect(recorded(upstream.requests)).toMatchObject({ path: '/v1/chat/completions' });
    expect(recorded(upstream.requests).json).toMatchObject({
      model: CHAT_CHANNELS[OPENAI].upstreamModel,
      messages: [{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: QUESTION }],
    });
  });
});

describe('reasoning items of a translated turn', () => {
  it('carry the Anthropic thinking signature back with include reasoning.encrypted_content (Codex, store: false)', async () => {
    const model = await withRoute(VIA_ANTHROPIC);
    const { openai } = await client();
    const body = { model, store: false, include: ['reasoning.encrypted_content' as const], reasoning: { effort: 'low' as const }, tools: [WEATHER_TOOL] };
    const first = await respond(openai, true, { ...body, input: 'weather in Paris?' });
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    const signature = /sig-fake-\d+/.exec(reasoning.encrypted_content ?? '')?.[0];
    expect(signature).toEqual(expect.any(String));
    const second = await respond(openai, true, {
      ...body,
      input: [
        { role: 'user', content: 'weather in Paris?' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ],
    });
    expect(second.output_text).toBe(ANSWER);
    const messages = recorded(upstream.requests, 1).json.messages as { role: string; content: unknown[] }[];
    expect(messages[1]?.content[0]).toEqual({ type: 'thinking', thinking: FAKE_THOUGHT, signature });
  });
});
