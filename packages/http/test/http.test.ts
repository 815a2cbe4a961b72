import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { AppError } from '@modelgate/errors';
import { createLogger } from '@modelgate/logger';
import { createServiceMetrics, errorHandler, healthRouter, MAX_PAGE, notFound, pageOf, parseOrThrow, rejectNulCharacters, requestId } from '../src';

const logger = createLogger({ service: 'test', level: 'silent' });

function buildApp(ready: () => Promise<unknown>, optional: () => Promise<unknown> = async () => undefined) {
  const metrics = createServiceMetrics('test');
  const app = express();
  app.use(requestId());
  app.use(metrics.middleware);
  app.get('/metrics', metrics.handler);
  app.use(healthRouter({ required: { dependency: ready }, reported: { optional } }, { timeoutMs: 200 }));
  app.use(express.json());
  app.post('/things', (req, res) => {
    const body = parseOrThrow(z.object({ name: z.string().min(1), size: z.number().int() }).strict(), req.body);
    res.json({ success: true, message: '', data: body });
  });
  app.get('/boom', () => {
    throw new Error('SELECT secret FROM users -- should never leak');
  });
  app.get('/teapot', () => {
    throw new AppError('rate_limited', 'slow down', { retryAfter: 5 });
  });
  app.use(notFound('envelope'));
  app.use(errorHandler(logger, 'envelope'));
  return app;
}

describe('http helpers', () => {
  it('keeps a well-formed request id and replaces a malformed one', async () => {
    const app = buildApp(async () => undefined);
    const kept = await request(app).get('/healthz').set('X-Request-Id', 'abc-123');
    expect(kept.headers['x-request-id']).toBe('abc-123');
    const replaced = await request(app).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers readiness from its required checks, failing a hung dependency', async () => {
    expect((await request(buildApp(async () => undefined)).get('/readyz')).status).toBe(200);
    const hung = await request(buildApp(() => new Promise(() => undefined))).get('/readyz');
    expect(hung.status).toBe(503);
    expect(hung.body.checks).toEqual({ dependency: 'down' });
  });

  it('stays ready when a reported dependency is down, and shows every check in /health', async () => {
    let optionalCalls = 0;
    const app = buildApp(async () => undefined, async () => {
      optionalCalls += 1;
      throw new Error('optional dependency down');
    });
    const ready = await request(app).get('/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: { status: 'ok', checks: { dependency: 'ok' } } });
    expect(optionalCalls).toBe(0);
    const health = await request(app).get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({
      status: 'degraded',
      checks: {
        dependency: { status: 'ok', required: true, latency_ms: expect.any(Number) },
        optional: { status: 'down', required: false, latency_ms: expect.any(Number) },
      },
    });
    const down = await request(buildApp(() => new Promise(() => undefined))).get('/health');
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'unavailable', checks: { dependency: { status: 'down', required: true } } });
    expect(down.body.checks.dependency.latency_ms).toBeGreaterThanOrEqual(190);
  });

  it('rejects unknown and invalid fields with 400 naming the field', async () => {
    const app = buildApp(async () => undefined);
    const unknown = await request(app).post('/things').send({ name: 'a', size: 1, role: 100 });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ success: false, code: 'invalid_request' });
    expect(unknown.body.message).toContain('role');
    const invalid = await request(app).post('/things').send({ name: 'a', size: 1.5 });
    expect(invalid.body.message).toContain('size');
  });

  it('hides internal errors and renders rate limits with Retry-After', async () => {
    const app = buildApp(async () => undefined);
    const boom = await request(app).get('/boom');
    expect(boom.status).toBe(500);
    expect(JSON.stringify(boom.body)).not.toContain('SELECT');
    const limited = await request(app).get('/teapot');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('5');
  });

  it('answers unknown routes with a 404 envelope and counts requests by route', async () => {
    const app = buildApp(async () => undefined);
    const missing = await request(app).get('/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, code: 'not_found' });
    await request(app).post('/things').send({ name: 'a', size: 1 });
    const metrics = await request(app).get('/metrics');
    expect(metrics.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/things"[^}]*status="200"/);
  });

});

/** The AppError a call throws, as its code, message and param. */
function thrown(run: () => unknown): { code: string; message: string; param: unknown } {
  try {
    run();
  } catch (err) {
    const { code, message, param } = err as AppError;
    return { code, message, param };
  }
  throw new Error('nothing thrown');
}

describe('pagination', () => {
  it('reads p and page_size, empty parameters as the defaults', () => {
    expect(pageOf({ p: '3', page_size: '100' })).toEqual({ page: 3, pageSize: 100, skip: 200 });
    expect(pageOf({})).toEqual({ page: 1, pageSize: 10, skip: 0 });
    expect(pageOf({ p: '', page_size: '' })).toEqual({ page: 1, pageSize: 10, skip: 0 });
    expect(pageOf({ p: String(MAX_PAGE), page_size: '1' })).toEqual({ page: MAX_PAGE, pageSize: 1, skip: MAX_PAGE - 1 });
  });

  it.each([
    [{ p: '10000000000000000000000000000' }, 'p'],
    [{ p: String(MAX_PAGE + 1) }, 'p'],
    [{ p: '0' }, 'p'],
    [{ p: '-1' }, 'p'],
    [{ p: '2.5' }, 'p'],
    [{ p: '1e3' }, 'p'],
    [{ p: ['1', '2'] }, 'p'],
    [{ page_size: '101' }, 'page_size'],
    [{ page_size: '0' }, 'page_size'],
    [{ page_size: 'ten' }, 'page_size'],
  ])('refuses %j with a 400 naming the parameter', (query, param) => {
    expect(thrown(() => pageOf(query))).toEqual({ code: 'invalid_request', message: expect.stringMatching(new RegExp(`^${param}: `)), param });
  });
});

describe('NUL characters', () => {
  const schema = z.object({ name: z.string(), tags: z.array(z.string()), meta: z.record(z.string(), z.string()) }).strict();

  it('are refused anywhere in parsed input, naming the first field that holds one', () => {
    expect(thrown(() => parseOrThrow(schema, { name: 'a\u0000', tags: [] }))).toMatchObject({ code: 'invalid_request', param: 'name' });
    expect(thrown(() => parseOrThrow(schema, { name: 'a', tags: ['x', 'y\u0000'] }))).toMatchObject({ param: 'tags.1' });
    expect(thrown(() => parseOrThrow(schema, { name: 'a', tags: [], meta: { ['k\u0000']: 'v' } }))).toMatchObject({ param: 'meta' });
    expect(thrown(() => parseOrThrow(schema, { unknown: '\u0000', name: '\u0000' })).param).toBe('unknown');
    expect(thrown(() => parseOrThrow(z.string(), '\u0000'))).toMatchObject({ message: expect.stringMatching(/^body: /), param: null });
  });

  it('are checked without recursion, so a deeply nested body is a 400, not a stack overflow', () => {
    let deep: unknown = 'end';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(thrown(() => parseOrThrow(z.array(z.unknown()).max(0), deep))).toMatchObject({ code: 'invalid_request' });
  });

  it('are refused only in the stored fields when the caller names them', () => {
    const loose = z.looseObject({ model: z.string() });
    expect(parseOrThrow(loose, { model: 'm', prompt: 'a\u0000b' }, { storedFields: ['model'] })).toEqual({ model: 'm', prompt: 'a\u0000b' });
    expect(thrown(() => parseOrThrow(loose, { model: 'm\u0000' }, { storedFields: ['model'] }))).toMatchObject({ param: 'model' });
    expect(() => rejectNulCharacters({ model: 'm' })).not.toThrow();
  });
});
