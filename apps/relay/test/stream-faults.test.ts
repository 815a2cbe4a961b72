// docs/api.md 1.3 and 2.5: upstream streams that go wrong in ways the fake providers do not play.
// An in-stream error that echoes the channel key reaches the client masked, passed through or
// translated; an Anthropic stream closed before message_stop ends with an error event, charged for
// what was delivered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ANTHROPIC, CHAT_CHANNELS, CHAT_MODELS, chatChannel, type DirectType, OPENAI, postForEvents, settledConsumeRow } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite, setUnitPrices } from './harness';

const PROMPT = [{ role: 'user' as const, content: 'Say hello to me' }];

const anthropicEvent = (payload: { type: string } & Record<string, unknown>) => `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
const openAiEvent = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

/** The key the upstream received, as a provider echoes it in an error message. */
const keyOf = (headers: Record<string, string | string[] | undefined>) =>
  String(headers['x-api-key'] ?? String(headers.authorization ?? '').replace(/^Bearer /, ''));

/** What the stand-in sends on each path: the whole SSE body, written at once, then a clean end. */
type Script = (key: string) => string;
let scripts: Partial<Record<string, Script>> = {};
let standIn: { url: string; server: Server };

async function startStandIn(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const script = scripts[req.url ?? ''];
      if (!script) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(script(keyOf(req.headers)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const anthropicStart = anthropicEvent({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 4, output_tokens: 1 } },
});
const anthropicText = (pieces: number) =>
  anthropicEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
  Array.from({ length: pieces }, () => anthropicEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' hello' } })).join('');
const openAiChunk = openAiEvent({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'x', choices: [{ index: 0, delta: { content: ' hello' }, finish_reason: null }] });

relaySuite();

beforeAll(async () => {
  standIn = await startStandIn();
});

afterAll(() => new Promise((resolve) => standIn.server.close(resolve)));

async function withStandInChannel(type: DirectType): Promise<void> {
  await setUnitPrices(harness.prisma, CHAT_MODELS);
  await chatChannel(harness.prisma, type, standIn.url);
  await harness.reloadCaches();
}

beforeEach(async () => {
  await resetSuite();
  scripts = {};
});

describe('an in-stream error echoing the channel key', () => {
  it.each<[string, DirectType, string, Script]>([
    ['an OpenAI stream passed through', OPENAI, '/v1/chat/completions', (key) => openAiChunk + openAiEvent({ error: { message: `Incorrect API key provided: ${key}` } })],
    [
      'a translated Anthropic stream',
      ANTHROPIC,
      '/v1/messages',
      (key) => anthropicStart + anthropicText(1) + anthropicEvent({ type: 'error', error: { type: 'api_error', message: `key ${key} failed` } }),
    ],
  ])('reaches the client of %s masked, then [DONE]', async (_name, type, path, script) => {
    scripts[path] = script;
    await withStandInChannel(type);
    const { key } = await createCustomer(harness.prisma);
    const { status, events } = await postForEvents(harness, '/v1/chat/completions', key, { model: CHAT_CHANNELS[type].model, messages: PROMPT, stream: true });
    expect(status).toBe(200);
    expect(events.at(-1)).toBe('[DONE]');
    const failure = JSON.parse(events.at(-2) ?? '{}') as { error?: { message?: string } };
    expect(failure.error?.message).toContain('[redacted]');
    expect(events.join('\n')).not.toContain(CHAT_CHANNELS[type].key);
  });
});

describe('an Anthropic stream closed before message_stop', () => {
  it('ends with the error event and is charged for the text delivered, not the output count message_start announced', async () => {
    scripts['/v1/messages'] = () => anthropicStart + anthropicText(5);
    await withStandInChannel(ANTHROPIC);
    const customer = await createCustomer(harness.prisma);
    const { status, events } = await postForEvents(harness, '/v1/chat/completions', customer.key, {
      model: CHAT_CHANNELS[ANTHROPIC].model,
      messages: PROMPT,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(status).toBe(200);
    const content = events.slice(0, -2).map((event) => (JSON.parse(event) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '');
    expect(content.join('')).toBe(' hello'.repeat(5));
    expect(JSON.parse(events.at(-2) ?? '{}')).toMatchObject({ error: { type: 'upstream_error' } });
    expect(events.at(-1)).toBe('[DONE]');
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: 4, completionTokens: 5, isStream: true });
    await expectLedgerInvariant(harness.prisma);
  });
});
