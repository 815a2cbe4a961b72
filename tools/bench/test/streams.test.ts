import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { type AnswerDialect, callOf, DIRECT_KINDS } from '../src/requests';
import { classifyEvent, runOpenStreams, runStreams, type StreamEventKind, StreamLoad } from '../src/streams';

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}`;
const anthropic = (type: string, payload: Record<string, unknown>) => `event: ${type}\n${data({ type, ...payload })}`;
// Responses events are framed as Anthropic's: an `event:` line, then a payload with its type.
const responses = anthropic;
const gemini = (text: string, finishReason?: string) =>
  data({ candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }] });

describe('reading stream events', () => {
  it.each<[string, AnswerDialect, string, StreamEventKind]>([
    ['a completions text chunk', 'openai', data({ object: 'text_completion', choices: [{ index: 0, text: ' hello' }] }), 'text'],
    ['a chat content chunk', 'openai', data({ choices: [{ index: 0, delta: { content: ' hello' } }] }), 'text'],
    ['a chat role chunk', 'openai', data({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }), 'other'],
    ['a finish chunk', 'openai', data({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), 'other'],
    ['a usage chunk', 'openai', data({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 20 } }), 'other'],
    ['[DONE]', 'openai', 'data: [DONE]', 'end'],
    ['an Anthropic text delta', 'anthropic', anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' hello' } }), 'text'],
    ['an Anthropic message start', 'anthropic', anthropic('message_start', { message: { id: 'msg_1' } }), 'other'],
    ['an Anthropic ping', 'anthropic', anthropic('ping', {}), 'other'],
    ['an Anthropic block start', 'anthropic', anthropic('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), 'other'],
    ['an Anthropic message stop', 'anthropic', anthropic('message_stop', {}), 'end'],
    ['a responses text delta', 'responses', responses('response.output_text.delta', { delta: ' hello' }), 'text'],
    ['a responses item added', 'responses', responses('response.output_item.added', { output_index: 0 }), 'other'],
    ['a responses text done', 'responses', responses('response.output_text.done', { text: ' hello hello' }), 'other'],
    ['a response completed', 'responses', responses('response.completed', { response: {} }), 'end'],
    ['a response incomplete (capped)', 'responses', responses('response.incomplete', { response: {} }), 'end'],
    ['a Gemini text chunk', 'gemini', gemini(' hello'), 'text'],
    ['the last Gemini chunk, with text and finishReason', 'gemini', gemini(' hello', 'STOP'), 'last text'],
    ['a last Gemini chunk without text', 'gemini', gemini('', 'MAX_TOKENS'), 'end'],
  ])('%s is %s', (_name, dialect, event, kind) => {
    expect(classifyEvent(dialect, event)).toBe(kind);
  });

  it.each<[string, AnswerDialect, string, string]>([
    ['an OpenAI error event', 'openai', data({ error: { message: 'overloaded' } }), 'error event'],
    ['an Anthropic error event', 'anthropic', anthropic('error', { error: { type: 'overloaded_error' } }), 'error event'],
    ['a responses error event', 'responses', responses('error', { code: 'server_error' }), 'error event'],
    ['a response failed', 'responses', responses('response.failed', { response: {} }), 'error event'],
    ['a Gemini error', 'gemini', data({ error: { code: 503, status: 'UNAVAILABLE' } }), 'error event'],
    ['data that is not JSON', 'openai', 'data: {"choices": [', 'malformed event'],
    ['an event without data', 'anthropic', 'event: ping', 'malformed event'],
  ])('%s fails the stream', (_name, dialect, event, message) => {
    expect(() => classifyEvent(dialect, event)).toThrow(message);
  });
});

/** Image generations are asked for whole answers only. */
const STREAMED_KINDS = DIRECT_KINDS.filter((kind) => kind !== 'images');

describe('streams from the fake upstream, in each kind the bench streams', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ record: false, chunks: 3 });
  });
  afterAll(() => upstream.close());

  it.each(STREAMED_KINDS)('%s: every stream complete with every chunk', async (kind) => {
    const call = callOf(kind, { origin: upstream.url, direct: true, key: 'sk-bench', completionsModel: 'gpt-3.5-turbo-instruct', chunks: 3, stream: true });
    const result = await runStreams(call, { concurrency: 2, spreadMs: 0, expectedChunks: 3 }, (run) => run < 2);
    expect(result).toMatchObject({ streams: 4, ok: 4, errors: 0, chunks: 12 });
  });

  it('tallies the runs of a load taken in turns as one, rated over their running time only', async () => {
    const call = callOf('chat-anthropic', { origin: upstream.url, direct: true, key: 'sk-bench', completionsModel: 'unused', chunks: 3, stream: true });
    const load = new StreamLoad(call, { concurrency: 2, spreadMs: 0, expectedChunks: 3 });
    await load.run((run) => run < 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await load.run((run) => run < 2);
    const result = await load.close();
    expect(result).toMatchObject({ streams: 6, ok: 6, chunks: 18 });
    // Six streams of a few milliseconds each: far more than 20 a second unless the pause counted.
    expect(result.requestsPerSecond).toBeGreaterThan(20);
  });

  it('holds slow streams open together (the fake spaces their chunks as asked) and says when all have their first byte', async () => {
    const fast = callOf('completions', { origin: upstream.url, direct: true, key: 'sk-bench', completionsModel: 'gpt-3.5-turbo-instruct', chunks: 3, stream: true });
    const slow = { ...fast, body: JSON.stringify({ ...(JSON.parse(fast.body as string) as object), fake_chunk_delay_ms: 150 }) };
    let openAt = 0;
    const started = Date.now();
    const result = await runOpenStreams(slow, 20, 3, 100, () => (openAt = Date.now()));
    const took = Date.now() - started;
    expect(result).toMatchObject({ streams: 20, ok: 20, errors: 0, chunks: 60 });
    // All open after the ramp, before the first gap of 150 ms ended; each stream took two gaps.
    expect(openAt - started).toBeLessThan(250);
    expect(took).toBeGreaterThanOrEqual(300);
    expect(result.gap.p50).toBeGreaterThanOrEqual(140);
  });
});

describe('chunks held back', () => {
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    // Two text events in one write (as a gateway holding the first back would send them), then one alone.
    server = createServer((_req, res) => {
      const text = `${data({ choices: [{ index: 0, delta: { content: ' hello' } }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(text + text);
      setTimeout(() => res.end(`${text}data: [DONE]\n\n`), 30);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts a text chunk that arrived with the previous one as merged', async () => {
    const call = callOf('chat-openai', { origin, direct: false, key: 'sk-bench', completionsModel: 'unused', chunks: 3, stream: true });
    const result = await runStreams(call, { concurrency: 1, spreadMs: 0, expectedChunks: 3 }, (run) => run < 1);
    expect(result).toMatchObject({ ok: 1, chunks: 3, merged: 1 });
  });

  it('reads events separated by CRLF pairs (Gemini), a pair split between two reads included', async () => {
    const crlf = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`${gemini(' hello')}\r`);
      setTimeout(() => res.write(`\n\r\n${gemini(' hello')}\r\n\r\n`), 30);
      setTimeout(() => res.end(`${gemini(' hello', 'STOP')}\r\n\r\n`), 60);
    });
    await new Promise<void>((resolve) => crlf.listen(0, '127.0.0.1', resolve));
    try {
      const call = callOf('gemini', {
        origin: `http://127.0.0.1:${(crlf.address() as AddressInfo).port}`,
        direct: false,
        key: 'sk-bench',
        completionsModel: 'unused',
        chunks: 3,
        stream: true,
      });
      const result = await runStreams(call, { concurrency: 1, spreadMs: 0, expectedChunks: 3 }, (run) => run < 1);
      expect(result).toMatchObject({ ok: 1, errors: 0, chunks: 3 });
    } finally {
      await new Promise<void>((resolve) => crlf.close(() => resolve()));
    }
  });

  it('fails a stream that delivers fewer chunks than the upstream sent', async () => {
    const call = callOf('chat-openai', { origin, direct: false, key: 'sk-bench', completionsModel: 'unused', chunks: 4, stream: true });
    const result = await runStreams(call, { concurrency: 1, spreadMs: 0, expectedChunks: 4 }, (run) => run < 1);
    expect(result).toMatchObject({ ok: 0, errors: 1, errorKinds: ['3 of 4 chunks x1'] });
  });
});
