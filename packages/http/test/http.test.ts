import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { AppError } from '@modelgate/errors';
import { createLogger } from '@modelgate/logger';
import { createServiceMetrics, errorHandler, healthRouter, notFound, pageOf, parseOrThrow, requestId } from '../src';

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

  it('clamps pagination', () => {
    expect(pageOf({ p: '3', page_size: '500' })).toEqual({ page: 3, pageSize: 100, skip: 200 });
    expect(pageOf({})).toEqual({ page: 1, pageSize: 10, skip: 0 });
  });
});
