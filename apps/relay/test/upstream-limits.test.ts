// docs/api.md 1.3 "What an upstream sends" and 2.1: nothing an upstream sends stalls the relay. A
// delivered text without usage is counted with bounded work, a whole answer over
// MAX_UPSTREAM_BODY_MB is a 502 read no further, one stream event over 16 MB ends the stream with the
// client's error event, and a translated stream cut before its end marker never finishes normally.
import { FAKE_TEXT_PIECE, type FakeMode } from '@modelgate/testing/fake-upstream';
import { ANTHROPIC, CHAT_CHANNELS, CHAT_MODELS, chatChannel, type DirectType, GEMINI, OPENAI, settledConsumeRow } from './chat-support';
import { VIA_CHAT } from './responses-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

/** Small enough that a 100 MB answer shows whether it was held (the default is 64). */
const MAX_UPSTREAM_BODY_MB = 8;
const MB = 1024 * 1024;

relaySuite({ MAX_UPSTREAM_BODY_MB: String(MAX_UPSTREAM_BODY_MB) });

beforeEach(() => resetSuite());

type Dialect = 'chat' | 'messages' | 'responses' | 'gemini';

/** The request a client of `dialect` sends for `model`, streamed or not. */
function clientRequest(dialect: Dialect, model: string, stream: boolean): { path: string; body: unknown } {
  const prompt = 'Say hello to me';
  switch (dialect) {
    case 'chat':
      return { path: '/v1/chat/completions', body: { model, stream, messages: [{ role: 'user', content: prompt }] } };
    case 'messages':
      return { path: '/v1/messages', body: { model, stream, max_tokens: 64, messages: [{ role: 'user', content: prompt }] } };
    case 'responses':
      return { path: '/v1/responses', body: { model, stream, input: prompt } };
    case 'gemini':
      return {
        path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        body: { contents: [{ role: 'user', parts: [{ text: prompt }] }] },
      };
  }
}

interface ReadEvent {
  event: string | null;
  data: string;
}

/** Posts as a client of `dialect` and reads the whole answer; a stream's events are parsed. */
async function call(dialect: Dialect, model: string, key: string, stream = true) {
  const { path, body } = clientRequest(dialect, model, stream);
  const response = await fetch(`${harness.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const events: ReadEvent[] = text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const name = lines.find((line) => line.startsWith('event: '));
      return { event: name ? name.slice(7) : null, data: lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n') };
    });
  return { status: response.status, text, events };
}

/**
 * Unit prices, one channel of `type` (with `fields`) on the fake upstream answering in `mode`, and a
 * customer; the model to ask for.
 */
async function setUp(type: DirectType, mode: FakeMode, options: Parameters<typeof upstream.setMode>[1] = {}, fields: Parameters<typeof chatChannel>[3] = {}) {
  await setUnitPrices(harness.prisma, CHAT_MODELS);
  await chatChannel(harness.prisma, type, upstream.url, fields);
  await harness.reloadCaches();
  upstream.setMode(mode, { textPiece: FAKE_TEXT_PIECE, ...options });
  const customer = await createCustomer(harness.prisma);
  return { model: CHAT_CHANNELS[type].model, customer };
}

/** The error event that ends a stream in the client's dialect (docs/api.md 2.1, 2.3, 2.9, 2.10). */
function expectErrorEnd(dialect: Dialect, events: ReadEvent[]): void {
  const names = events.map((event) => event.event);
  const last = events.at(-1);
  switch (dialect) {
    case 'chat':
      expect(last?.data).toBe('[DONE]');
      expect(JSON.parse(events.at(-2)?.data ?? '{}')).toMatchObject({ error: { type: 'upstream_error' } });
      return;
    case 'messages':
      expect(last?.event).toBe('error');
      expect(JSON.parse(last?.data ?? '{}')).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      expect(names).not.toContain('message_stop');
      return;
    case 'responses':
      expect(last?.event).toBe('response.failed');
      expect(names).not.toContain('response.completed');
      return;
    case 'gemini':
      expect(JSON.parse(last?.data ?? '{}')).toMatchObject({ error: { status: 'UNAVAILABLE' } });
      return;
  }
}

describe('a stream without usage whose text is one 1 MB run without a space', () => {
  it('is counted without holding the event loop: the next call is answered within a second', async () => {
    // 4 pieces of 256 KB: the text delivered is 1 MB of one letter.
    const { model, customer } = await setUp(OPENAI, 'noUsage', { chunks: 4, textPiece: 'A'.repeat(256 * 1024) });
    const streamed = await call('chat', model, customer.key);
    expect(streamed.status).toBe(200);
    expect(streamed.events.at(-1)?.data).toBe('[DONE]');

    const startedAt = Date.now();
    const models = await fetch(`${harness.url}/v1/models`, { headers: { authorization: `Bearer ${customer.key}` } });
    expect(models.status).toBe(200);
    expect(Date.now() - startedAt).toBeLessThan(1_000);

    const row = await settledConsumeRow(harness);
    // o200k reads such a run 8 letters to a token or so: counted, not guessed at zero.
    expect(row.completionTokens).toBeGreaterThan(MB / 16);
    expect(row.completionTokens).toBeLessThan(MB / 4);
    await expectLedgerInvariant(harness.prisma);
  });
});

describe('a whole answer over MAX_UPSTREAM_BODY_MB', () => {
  it('is a 502 read no further, with the relay memory far below the answer size', async () => {
    const { model, customer } = await setUp(OPENAI, 'oversized', { oversizedBytes: 100 * MB });
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakArrayBuffers = before.arrayBuffers;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakRss = Math.max(peakRss, now.rss);
      peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers);
    }, 5);
    let answer: Awaited<ReturnType<typeof call>>;
    try {
      answer = await call('chat', model, customer.key, false);
    } finally {
      clearInterval(sampler);
    }
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.text)).toMatchObject({ error: { type: 'upstream_error', code: 'upstream_error' } });
    expect(peakArrayBuffers - before.arrayBuffers).toBeLessThan(40 * MB);
    expect(peakRss - before.rss).toBeLessThan(60 * MB);
    // The relay stopped reading: the fake never got to write the whole answer.
    expect(upstream.requests[0]?.completed).toBe(false);
    expect(await harness.prisma.log.count({ where: { type: 2 } })).toBe(0);
  });
});

describe('one stream event over 16 MB', () => {
  it.each<[Dialect, DirectType]>([
    ['chat', OPENAI],
    ['messages', ANTHROPIC],
    ['responses', OPENAI],
    ['gemini', GEMINI],
  ])('ends a %s stream with its error event within seconds', async (dialect, type) => {
    const { model, customer } = await setUp(type, 'oversized', { oversizedBytes: 17 * MB });
    const startedAt = Date.now();
    const { status, events } = await call(dialect, model, customer.key);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(status).toBe(200);
    expectErrorEnd(dialect, events);
    expect(events.some((event) => event.data.includes('"padding"'))).toBe(false);
  });
});

describe('a translated stream whose upstream ends without its end marker', () => {
  it.each<[Dialect, DirectType]>([
    ['chat', ANTHROPIC],
    ['chat', GEMINI],
    ['messages', OPENAI],
    ['messages', GEMINI],
    ['responses', ANTHROPIC],
    ['responses', GEMINI],
  ])('ends a %s stream from a type %i channel with the error event, charged for what it delivered', async (dialect, type) => {
    const { model, customer } = await setUp(type, 'endMidStream');
    const { status, events } = await call(dialect, model, customer.key);
    expect(status).toBe(200);
    expectErrorEnd(dialect, events);
    // The two pieces delivered (" hello" twice) are charged, as for a stream the client left.
    expect(await settledConsumeRow(harness)).toMatchObject({ completionTokens: 2, isStream: true });
    await expectLedgerInvariant(harness.prisma);
  });

  it('ends a responses stream from a chat-only OpenAI channel the same way', async () => {
    const { model, customer } = await setUp(OPENAI, 'endMidStream', {}, VIA_CHAT.fields);
    const { events } = await call('responses', model, customer.key);
    expectErrorEnd('responses', events);
    expect(await settledConsumeRow(harness)).toMatchObject({ completionTokens: 2, isStream: true });
  });
});
