// The relay's /metrics after some traffic: HTTP requests, upstream latency, first-byte time,
// errors and retries by channel and model, quota charged and tokens by model.
import { metricValue } from '@modelgate/http';
import { redisPrefix } from '@modelgate/testing';
import { backup, createCustomer, eventually, harness, ledgerEntry, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream as primary } from './harness';

relaySuite({ CHANNEL_COOLDOWN_MS: '60000' }, { upstreams: 2 });

async function scrape(): Promise<string> {
  const res = await fetch(`${harness.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

it('counts requests, upstream latency, first bytes, errors, retries, quota and tokens after traffic', async () => {
  await harness.reset();
  await setUnitPrices(harness.prisma);
  const first = await openAiChannel(harness.prisma, primary.url, { priority: 10 });
  const second = await openAiChannel(harness.prisma, backup.url, { priority: 0 });
  await harness.reloadCaches();
  const customer = await createCustomer(harness.prisma);
  const client = openAiClient(harness, customer.key);

  // The primary fails with a 500: retried on the backup (and then cooled down for the next calls).
  primary.setMode('error500');
  await client.completions.create({ model: MODEL, prompt: [1, 2], max_tokens: 3 });
  const stream = await client.completions.create({ model: MODEL, prompt: [1, 2, 3], max_tokens: 4, stream: true });
  for await (const chunk of stream) expect(chunk.model).toBe(MODEL);
  // A mid-stream failure: the client already has its first byte, nothing is retried.
  backup.setMode('resetMidStream');
  const broken = await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 5, stream: true });
  await expect(async () => {
    for await (const chunk of broken) expect(chunk).toBeDefined();
  }).rejects.toThrow();
  const unknownModel = await fetch(`${harness.url}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'no-such-model', prompt: 'x' }),
  });
  expect(unknownModel.status).toBe(404);

  await harness.relay.ledger.flush();
  const text = await eventually(async () => {
    const scraped = await scrape();
    // The access counter is updated when the response closes, just after the client saw it.
    expect(metricValue(scraped, 'http_request_duration_seconds_count', { route: '/v1/completions', status: 200 })).toBe(3);
    return scraped;
  });
  const primarySeries = { channel: first.id, model: MODEL };
  const backupSeries = { channel: second.id, model: MODEL };

  expect(metricValue(text, 'http_request_duration_seconds_count', { service: 'relay', method: 'POST', route: '/v1/completions', status: 404 })).toBe(1);
  expect(metricValue(text, 'relay_upstream_errors_total', { ...primarySeries, reason: 'http_500' })).toBe(1);
  expect(metricValue(text, 'relay_upstream_retries_total', primarySeries)).toBe(1);
  expect(metricValue(text, 'relay_upstream_errors_total', { ...backupSeries, reason: 'stream_error' })).toBe(1);
  expect(metricValue(text, 'relay_upstream_retries_total', backupSeries)).toBeUndefined();
  // Every attempt that got response headers is timed, failed ones included.
  expect(metricValue(text, 'relay_upstream_latency_seconds_count', primarySeries)).toBe(1);
  expect(metricValue(text, 'relay_upstream_latency_seconds_count', backupSeries)).toBe(3);
  expect(metricValue(text, 'relay_upstream_latency_seconds_bucket', { ...backupSeries, le: '+Inf' })).toBe(3);
  expect(metricValue(text, 'relay_first_byte_seconds_count', backupSeries)).toBe(3);
  expect(metricValue(text, 'relay_first_byte_seconds_count', primarySeries)).toBeUndefined();
  expect(metricValue(text, 'relay_first_byte_seconds_sum', backupSeries)).toBeGreaterThan(0);

  // Unit prices: 1 quota per token. Whole: 2 + 3; stream: 3 + 4; broken stream: what was generated.
  const logs = await harness.prisma.log.findMany({ where: { type: 2 } });
  expect(logs).toHaveLength(3);
  const prompt = logs.reduce((sum, log) => sum + log.promptTokens, 0);
  const completion = logs.reduce((sum, log) => sum + log.completionTokens, 0);
  expect(prompt).toBe(2 + 3 + 1);
  expect(metricValue(text, 'relay_tokens_total', { model: MODEL, type: 'prompt' })).toBe(prompt);
  expect(metricValue(text, 'relay_tokens_total', { model: MODEL, type: 'completion' })).toBe(completion);
  expect(metricValue(text, 'relay_quota_charged_total', { model: MODEL })).toBe(-logs.reduce((sum, log) => sum + Number(log.quota), 0));
  expect(metricValue(text, 'relay_quota_charged_total', { model: MODEL })).toBe(prompt + completion);

  // Process metrics come with every scrape.
  expect(text).toMatch(/^process_resident_memory_bytes\{service="relay"\} \d+/m);
});

// Readable route labels for the Gemini operations (they shared one label, the two Express
// paths joined), and gauges of the relay's state computed at scrape time.
it('labels each Gemini operation and API version on its own', async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma, ['gemini-2.5-flash']);
  await openAiChannel(harness.prisma, primary.url, { type: 24, models: 'gemini-2.5-flash', key: 'gemini-channel-key' });
  await harness.reloadCaches();
  const customer = await createCustomer(harness.prisma);
  const call = (path: string) =>
    fetch(`${harness.url}${path}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': customer.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
    }).then(async (res) => [res.status, await res.text()] as const);
  expect((await call('/v1beta/models/gemini-2.5-flash:generateContent'))[0]).toBe(200);
  expect((await call('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'))[0]).toBe(200);
  expect((await call('/v1/models/gemini-2.5-flash:generateContent'))[0]).toBe(200);
  expect((await call('/V1BETA/models/gemini-2.5-flash:generateContent/'))[0]).toBe(200);
  expect((await call('/v1beta/models/gemini-2.5-flash:countTokens'))[0]).toBe(404);

  const text = await eventually(async () => {
    const scraped = await scrape();
    expect(metricValue(scraped, 'http_request_duration_seconds_count', { route: '/v1beta/models/:target' })).toBe(1);
    return scraped;
  });
  const count = (route: string, status = 200) => metricValue(text, 'http_request_duration_seconds_count', { method: 'POST', route, status });
  expect(count('/v1beta/models/:model:generateContent')).toBe(2);
  expect(count('/v1beta/models/:model:streamGenerateContent')).toBe(1);
  expect(count('/v1/models/:model:generateContent')).toBe(1);
  expect(count('/v1beta/models/:target', 404)).toBe(1);
  expect(text).not.toContain(',/v1/models/');
});

it('gauges the ledger backlog, dead letters, streams in flight and channel status', async () => {
  await resetSuite({ chunks: 4, chunkDelayMs: 150 });
  await setUnitPrices(harness.prisma);
  const enabled = await openAiChannel(harness.prisma, primary.url);
  const disabled = await openAiChannel(harness.prisma, backup.url, { status: 2 });
  const autoDisabled = await openAiChannel(harness.prisma, backup.url, { type: 24, models: 'gemini-2.5-flash', status: 3 });
  await harness.reloadCaches();
  const customer = await createCustomer(harness.prisma);
  const client = openAiClient(harness, customer.key);

  const idle = await scrape();
  expect(metricValue(idle, 'relay_ledger_backlog')).toBe(0);
  expect(metricValue(idle, 'relay_ledger_dead_letters')).toBe(0);
  expect(metricValue(idle, 'relay_streams_in_flight')).toBe(0);
  const status = (channel: { id: number }, type: string, state: string) => metricValue(idle, 'relay_channel_status', { channel: channel.id, type, status: state });
  expect([status(enabled, 'openai', 'enabled'), status(enabled, 'openai', 'disabled'), status(enabled, 'openai', 'auto_disabled')]).toEqual([1, 0, 0]);
  expect([status(disabled, 'openai', 'enabled'), status(disabled, 'openai', 'disabled'), status(disabled, 'openai', 'auto_disabled')]).toEqual([0, 1, 0]);
  expect([status(autoDisabled, 'gemini', 'enabled'), status(autoDisabled, 'gemini', 'disabled'), status(autoDisabled, 'gemini', 'auto_disabled')]).toEqual([0, 0, 1]);

  // A stream in flight (its chunks 150 ms apart), counted until it ends.
  const stream = await client.completions.create({ model: MODEL, prompt: [1, 2], max_tokens: 4, stream: true });
  const chunks = stream[Symbol.asyncIterator]();
  await chunks.next();
  expect(metricValue(await scrape(), 'relay_streams_in_flight')).toBe(1);
  while (!(await chunks.next()).done);
  await eventually(async () => expect(metricValue(await scrape(), 'relay_streams_in_flight')).toBe(0));

  // Charges settled while the writer is stopped wait in Redis; one PostgreSQL refuses is set aside.
  await harness.relay.ledger.stop(); // writes what is queued (the stream's charge) first
  try {
    await client.completions.create({ model: MODEL, prompt: [1, 2], max_tokens: 4 });
    await client.completions.create({ model: MODEL, prompt: [1, 2], max_tokens: 4 });
    expect(metricValue(await scrape(), 'relay_ledger_backlog')).toBe(2);
    const refused = ledgerEntry(customer, enabled.id, { quota: 10, promptTokens: 3_000_000_000, completionTokens: 5 });
    await harness.redis.hincrby(`${redisPrefix()}bal:u:${customer.userId}`, 'pending', refused.quota);
    await harness.redis.rpush(`${redisPrefix()}ledger:queue`, JSON.stringify(refused));
  } finally {
    await harness.relay.ledger.start();
  }
  await harness.relay.ledger.flush();
  const after = await scrape();
  expect(metricValue(after, 'relay_ledger_backlog')).toBe(0);
  expect(metricValue(after, 'relay_ledger_dead_letters')).toBe(1);
});
