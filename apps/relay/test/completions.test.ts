import { request as httpRequest, type IncomingMessage } from 'node:http';
import { consumeLogs, createCustomer, eventually, harness, MODEL, openAiClient, relaySuite, resetSuite, upstream, withOpenAiChannel } from './harness';

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withOpenAiChannel();
});

describe('POST /v1/completions', () => {
  it('answers with the requested model and a complete usage object, and bills it', async () => {
    const customer = await createCustomer(harness.prisma);
    const client = openAiClient(harness, customer.key);
    const completion = await client.completions.create({ model: MODEL, prompt: [1, 2, 3, 4], max_tokens: 5 });

    expect(completion.object).toBe('text_completion');
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]?.text).toBe(' hello'.repeat(5));
    expect(completion.usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: 5,
      total_tokens: 9,
      prompt_tokens_details: { cached_tokens: 0, text_tokens: 4, audio_tokens: 0, image_tokens: 0 },
      completion_tokens_details: { text_tokens: 5, audio_tokens: 0, reasoning_tokens: 0 },
    });

    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({
      userId: customer.userId,
      tokenId: customer.tokenId,
      modelName: MODEL,
      quota: -9n,
      promptTokens: 4,
      completionTokens: 5,
      isStream: false,
    });
    expect(log?.requestId).toBeTruthy();
    expect(log?.firstByteMs).not.toBeNull();
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
    expect(user).toMatchObject({ quota: 1_000_000n - 9n, usedQuota: 9n, requestCount: 1n });
  });

  it('forwards unknown OpenAI fields untouched and never forwards the client key', async () => {
    const customer = await createCustomer(harness.prisma);
    const body = {
      model: MODEL,
      prompt: 'Say hi',
      max_tokens: 3,
      logit_bias: { '50256': -100 },
      seed: 42,
      user: 'end-user-7',
      best_of: 1,
      frequency_penalty: 0.5,
    };
    const response = await fetch(`${harness.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const [received] = upstream.requests;
    expect(received?.json).toEqual(body);
    expect(received?.headers.authorization).toBe('Bearer sk-upstream-openai-secret');
    expect(JSON.stringify(received?.headers)).not.toContain(customer.key);
  });

  it('derives usage with its own tokenizer when the upstream reports none', async () => {
    upstream.setMode('noUsage');
    const customer = await createCustomer(harness.prisma);
    const completion = await openAiClient(harness, customer.key).completions.create({
      model: MODEL,
      prompt: 'hello world',
      max_tokens: 5,
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
    expect(completion.usage?.prompt_tokens_details).toEqual({ cached_tokens: 0, text_tokens: 2, audio_tokens: 0, image_tokens: 0 });
  });

  it('charges long delivered text by its real token count, not a length estimate', async () => {
    // 3 000 pieces of " hello": 18 000 characters, 3 000 tokens (a 4-characters-per-token guess says 4 500).
    upstream.setMode('noUsage', { chunks: 3_000 });
    const customer = await createCustomer(harness.prisma);
    const completion = await openAiClient(harness, customer.key).completions.create({ model: MODEL, prompt: 'hello world', max_tokens: 3_000 });
    expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3_000 });
    await harness.relay.ledger.flush();
    expect((await consumeLogs(harness.prisma)).map((l) => l.completionTokens)).toEqual([3_000]);
  });

  it('streams every chunk and ends with a usage chunk when include_usage is set', async () => {
    const customer = await createCustomer(harness.prisma);
    const stream = await openAiClient(harness, customer.key).completions.create({
      model: MODEL,
      prompt: [1, 2, 3],
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks).toHaveLength(6);
    expect(chunks.slice(0, 5).map((c) => c.choices[0]?.text).join('')).toBe(' hello'.repeat(5));
    for (const chunk of chunks) expect(chunk.model).toBe(MODEL);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 5,
      total_tokens: 8,
      prompt_tokens_details: { cached_tokens: 0, text_tokens: 3, audio_tokens: 0, image_tokens: 0 },
      completion_tokens_details: { text_tokens: 5, audio_tokens: 0, reasoning_tokens: 0 },
    });
    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({ quota: -8n, promptTokens: 3, completionTokens: 5, isStream: true });
  });

  it('streams without a usage chunk when not asked, still billing from the usage it requested upstream', async () => {
    const customer = await createCustomer(harness.prisma);
    const response = await fetch(`${harness.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: [1, 2], max_tokens: 5, stream: true }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(6);
    expect(events[5]).toBe('data: [DONE]');
    expect(text).not.toContain('"usage"');
    expect((upstream.requests[0]?.json as { stream_options: unknown }).stream_options).toEqual({ include_usage: true });

    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({ quota: -7n, promptTokens: 2, completionTokens: 5 });
  });

  it('maps the model upstream and shows the requested name to the client, streamed or not', async () => {
    await harness.prisma.channel.updateMany({ data: { modelMapping: JSON.stringify({ [MODEL]: 'upstream-instruct-v2' }) } });
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma);
    const client = openAiClient(harness, customer.key);

    const completion = await client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 2 });
    expect(completion.model).toBe(MODEL);
    const stream = await client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 2, stream: true });
    for await (const chunk of stream) expect(chunk.model).toBe(MODEL);

    expect(upstream.requests.map((r) => (r.json as { model: string }).model)).toEqual(['upstream-instruct-v2', 'upstream-instruct-v2']);
    await harness.relay.ledger.flush();
    expect((await consumeLogs(harness.prisma)).map((l) => l.modelName)).toEqual([MODEL, MODEL]);
  });

  it('aborts the upstream within a second when the client leaves mid-stream, and charges what was generated', async () => {
    upstream.setMode('slowDrip', { chunks: 50, chunkDelayMs: 100 });
    const customer = await createCustomer(harness.prisma);
    const controller = new AbortController();
    const stream = await openAiClient(harness, customer.key).completions.create(
      { model: MODEL, prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], max_tokens: 50, stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    for await (const _chunk of stream) {
      received += 1;
      if (received === 3) break;
    }
    controller.abort();
    const abortedAt = Date.now();

    const request = await eventually(() => {
      const [r] = upstream.requests;
      if (!r?.closedAt) throw new Error('the upstream request is still open');
      return { ...r, closedAt: r.closedAt };
    });
    expect(request.closedAt - abortedAt).toBeLessThan(1_000);
    expect(request.completed).toBe(false);
    expect(request.chunksSent).toBeLessThan(50);

    await eventually(async () => {
      await harness.relay.ledger.flush();
      expect(await consumeLogs(harness.prisma)).toHaveLength(1);
    });
    const [log] = await consumeLogs(harness.prisma);
    if (!log) throw new Error('no consume row');
    expect(log.promptTokens).toBe(10);
    expect(log.completionTokens).toBeGreaterThanOrEqual(3);
    expect(log.completionTokens).toBeLessThanOrEqual(request.chunksSent);
    expect(log.quota).toBe(BigInt(-(10 + log.completionTokens)));
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
    expect(user.quota).toBe(1_000_000n + log.quota);
  });

  it('charges nothing for a stream the client left before any text arrived', async () => {
    upstream.setMode('hangBeforeHeaders');
    const customer = await createCustomer(harness.prisma);
    const controller = new AbortController();
    const pending = openAiClient(harness, customer.key).completions.create(
      { model: MODEL, prompt: [1, 2, 3], max_tokens: 5, stream: true },
      { signal: controller.signal },
    );
    await eventually(() => expect(upstream.requests).toHaveLength(1));
    controller.abort();
    await expect(pending).rejects.toThrow();
    await eventually(() => expect(upstream.requests[0]?.closed).toBe(true));
    await harness.relay.ledger.flush();
    expect(await consumeLogs(harness.prisma)).toHaveLength(0);
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
    expect(user.quota).toBe(1_000_000n);
  });

  it('slows the upstream down to the pace of a client that stops reading', async () => {
    const total = 200_000;
    upstream.setMode('ok', { chunks: total });
    const customer = await createCustomer(harness.prisma);
    const request = httpRequest(`${harness.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
    });
    request.end(JSON.stringify({ model: MODEL, prompt: [1], max_tokens: total, stream: true }));
    const response = await new Promise<IncomingMessage>((resolve) => request.once('response', resolve));
    response.pause();

    const stalled = await eventually(async () => {
      const before = upstream.requests[0]?.chunksSent;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(upstream.requests[0]?.chunksSent).toBe(before);
      return before;
    });
    expect(stalled).toBeGreaterThan(0);
    expect(stalled).toBeLessThan(total);

    response.destroy();
    await eventually(() => expect(upstream.requests[0]?.closed).toBe(true));
    expect(upstream.requests[0]?.completed).toBe(false);
  });
});
