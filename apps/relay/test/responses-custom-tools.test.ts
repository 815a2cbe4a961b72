// docs/api.md 2.10: Codex's freeform custom tools (apply_patch) through the real relay with the openai
// SDK as the client. On a translated channel a custom tool reaches the upstream as a function of one
// string argument `input` and its call comes back as a `custom_tool_call` (whole and streamed); the
// history Codex sends back (custom_tool_call, custom_tool_call_output) reaches the upstream as a
// tool call and its result. The fakes call the first offered tool with {"city":"Paris"}: arguments
// without an `input` string, which reach the client as the custom call's input as they are (the
// decoding of `input` itself is checked in providers/responses-custom-tools.test.ts).
import { FAKE_TEXT_PIECE, FAKE_TOOL_ARGUMENTS, FAKE_TOOL_CALL_TOKENS } from '@modelgate/testing/fake-upstream';
import type OpenAI from 'openai';
import { countDeliveredTokens } from '../src/features/relay/tokens';
import { GEMINI, recorded, settledConsumeRow } from './chat-support';
import { createCustomer, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';
import { named, NATIVE, respond, type ResponsesRoute, streamResponse, VIA_ANTHROPIC, VIA_GEMINI, withRoute } from './responses-support';

const GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF';
const APPLY_PATCH: OpenAI.Responses.CustomTool = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
  format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR },
};
const SHELL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'shell',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  strict: false,
};
const PATCH = '*** Begin Patch\n*** Update File: a.py\n@@\n-print("old")\n+print("new")\n*** End Patch';
/** The fakes' tool-call arguments: what the custom call's input is, as it holds no `input` string. */
const FAKE_INPUT = JSON.stringify(FAKE_TOOL_ARGUMENTS);
const ANSWER = FAKE_TEXT_PIECE.repeat(5);

relaySuite();

beforeEach(async () => {
  await resetSuite();
});

async function client(): Promise<OpenAI> {
  const customer = await createCustomer(harness.prisma);
  return openAiClient(harness, customer.key);
}

/** The tools the upstream was offered, by name, each as the upstream's JSON Schema of its arguments. */
function offeredSchemas(route: ResponsesRoute, index = 0): Record<string, unknown> {
  const json = recorded(upstream.requests, index).json;
  if (route.type === GEMINI) {
    const [tools] = json.tools as { functionDeclarations: { name: string; parametersJsonSchema: unknown }[] }[];
    return Object.fromEntries((tools?.functionDeclarations ?? []).map((tool) => [tool.name, tool.parametersJsonSchema]));
  }
  return Object.fromEntries((json.tools as { name: string; input_schema: unknown }[]).map((tool) => [tool.name, tool.input_schema]));
}

const INPUT_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', description: expect.stringContaining(`lark grammar:\n${GRAMMAR}`) } },
  required: ['input'],
  additionalProperties: false,
};

describe.each(named([VIA_ANTHROPIC, VIA_GEMINI]))('custom tools on the %s channel', (_name, route) => {
  let model: string;
  beforeEach(async () => {
    model = await withRoute(route);
  });

  it.each([['plain', false], ['streaming', true]])(
    '%s: offers the custom tool as a function of one string argument and answers its call as a custom_tool_call',
    async (_mode, stream) => {
      const response = await respond(await client(), stream, { model, input: 'Fix a.py', tools: [APPLY_PATCH, SHELL] });
      expect(response.status).toBe('completed');
      expect(response.output).toEqual([
        { id: expect.stringMatching(/^ctc_/), type: 'custom_tool_call', status: 'completed', call_id: expect.any(String), input: FAKE_INPUT, name: 'apply_patch' },
      ]);
      expect(response.tools).toEqual([APPLY_PATCH, expect.objectContaining({ type: 'function', name: 'shell' })]);
      expect(response.usage?.output_tokens).toBe(FAKE_TOOL_CALL_TOKENS);
      expect(offeredSchemas(route)).toEqual({ apply_patch: INPUT_SCHEMA, shell: SHELL.parameters });
      expect(await settledConsumeRow(harness)).toMatchObject({ completionTokens: FAKE_TOOL_CALL_TOKENS, isStream: stream });
    },
  );

  it('streams the custom tool call events: the item added, its input deltas, the input done, the item done', async () => {
    const { events, response } = await streamResponse(await client(), { model, input: 'Fix a.py', tools: [APPLY_PATCH] });
    const types = events.map((event) => event.type);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...types.filter((type) => type === 'response.custom_tool_call_input.delta'),
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(types).toContain('response.custom_tool_call_input.delta');
    const deltas = events.flatMap((event) => (event.type === 'response.custom_tool_call_input.delta' ? [event.delta] : []));
    expect(deltas.join('')).toBe(FAKE_INPUT);
    expect(events[2]).toMatchObject({ item: { type: 'custom_tool_call', status: 'in_progress', input: '', name: 'apply_patch' } });
    expect(events.find((event) => event.type === 'response.custom_tool_call_input.done')).toMatchObject({ input: FAKE_INPUT, output_index: 0 });
    expect(response.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', input: FAKE_INPUT })]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  });

  it('forces the custom tool of tool_choice {type: "custom"}', async () => {
    const response = await respond(await client(), false, { model, input: 'Fix a.py', tools: [SHELL, APPLY_PATCH], tool_choice: { type: 'custom', name: 'apply_patch' } });
    expect(response.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch' })]);
    const json = recorded(upstream.requests).json;
    if (route.type === GEMINI) expect(json.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['apply_patch'] } });
    else expect(json.tool_choice).toEqual({ type: 'tool', name: 'apply_patch' });
  });

  it.each([['plain', false], ['streaming', true]])(
    "%s: takes Codex's next turn, a custom_tool_call and its output in the input, to the upstream as a tool call and its result",
    async (_mode, stream) => {
      const response = await respond(await client(), stream, {
        model,
        instructions: 'You are Codex.',
        store: false,
        tools: [APPLY_PATCH, SHELL],
        input: [
          { role: 'user', content: 'Fix a.py' },
          { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_1', name: 'apply_patch', input: PATCH },
          { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Success. Updated the following files:\nM a.py' },
        ],
      });
      expect(response).toMatchObject({ status: 'completed', output_text: ANSWER });
      const json = recorded(upstream.requests).json;
      if (route.type === GEMINI) {
        expect(json.contents).toEqual([
          { role: 'user', parts: [{ text: 'Fix a.py' }] },
          { role: 'model', parts: [expect.objectContaining({ functionCall: { name: 'apply_patch', args: { input: PATCH } } })] },
          { role: 'user', parts: [{ functionResponse: { name: 'apply_patch', response: { content: 'Success. Updated the following files:\nM a.py' } } }] },
        ]);
      } else {
        expect(json.messages).toEqual([
          { role: 'user', content: [{ type: 'text', text: 'Fix a.py' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'apply_patch', input: { input: PATCH } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Success. Updated the following files:\nM a.py' }] },
        ]);
      }
    },
  );

  it.each([['plain', false], ['streaming', true]])('%s: without upstream usage, charges the call (name and arguments) as generated text', async (_mode, stream) => {
    upstream.setMode('noUsage');
    const response = await respond(await client(), stream, { model, input: 'Fix a.py', tools: [APPLY_PATCH] });
    const completion = countDeliveredTokens(['apply_patch', FAKE_INPUT]);
    expect(completion).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBe(completion);
    expect(await settledConsumeRow(harness)).toMatchObject({ completionTokens: completion });
  });
});

describe('custom tools natively on an OpenAI channel', () => {
  it('pass through untouched: the tool, the tool choice and the custom items of the input', async () => {
    const model = await withRoute(NATIVE);
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: 'Fix a.py' },
      { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: PATCH },
      { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Done.' },
    ];
    const response = await respond(await client(), false, { model, input, tools: [APPLY_PATCH], tool_choice: { type: 'custom', name: 'apply_patch' } });
    expect(response.status).toBe('completed');
    expect(recorded(upstream.requests).json).toMatchObject({ tools: [APPLY_PATCH], tool_choice: { type: 'custom', name: 'apply_patch' }, input });
  });
});
