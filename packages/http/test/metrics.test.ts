import express, { Router } from 'express';
import request from 'supertest';
import { AppError } from '@modelgate/errors';
import { createLogger } from '@modelgate/logger';
import { createServiceMetrics, errorHandler, metricSamples, metricValue, notFound, requestId } from '../src';

const logger = createLogger({ service: 'test', level: 'silent' });

/** An app shaped like the account service: routers mounted under `/api`, errors thrown from routes. */
function buildApp() {
  const metrics = createServiceMetrics('test', { defaultMetrics: false });
  const api = Router();
  api.post('/user/login', (req) => {
    if (req.query.fail) throw new AppError('unauthorized', 'bad credentials');
    throw new AppError('rate_limited', 'slow down', { retryAfter: 1 });
  });
  api.get('/user/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  api.get('/', (_req, res) => {
    res.json({ root: true });
  });
  const app = express();
  app.use(requestId());
  app.use(metrics.middleware);
  app.get('/metrics', metrics.handler);
  app.use('/api', api);
  app.post(['/v1beta/models/:target', '/v1/models/:target'], (_req, res) => {
    res.json({});
  });
  app.use(notFound('envelope'));
  app.use(errorHandler(logger, 'envelope'));
  return app;
}

/** `METHOD route status xCOUNT` of every request counted so far. */
async function countedRoutes(app: express.Express): Promise<string[]> {
  const text = (await request(app).get('/metrics')).text;
  return metricSamples(text, 'http_request_duration_seconds_count')
    .map(({ labels, value }) => `${labels.method} ${labels.route} ${labels.status} x${value}`)
    .sort();
}

describe('service metrics', () => {
  it('labels requests by route pattern with its mount path, also when the route threw', async () => {
    const app = buildApp();
    await request(app).get('/api/user/7');
    await request(app).get('/api/user/8/');
    await request(app).post('/api/user/login?fail=1');
    await request(app).post('/api/user/login');
    await request(app).get('/api/');
    await request(app).post('/v1/models/gemini-pro:generateContent');
    await request(app).get('/no/such/path/12345');
    await request(app).get('/metrics');

    expect(await countedRoutes(app)).toEqual([
      'GET /api/ 200 x1',
      'GET /api/user/:id 200 x2',
      'GET /metrics 200 x1',
      'GET unmatched 404 x1',
      'POST /api/user/login 401 x1',
      'POST /api/user/login 429 x1',
      'POST /v1beta/models/:target,/v1/models/:target 200 x1',
    ]);
  });

  it('reads samples whatever the order of their labels', () => {
    const text = [
      '# HELP jobs_total Jobs',
      'jobs_total{state="done",queue="a"} 3',
      'jobs_total{queue="b",state="done"} 4',
      'jobs_total_extra{queue="b"} 9',
      'uptime_seconds 12.5',
    ].join('\n');
    expect(metricValue(text, 'jobs_total', { queue: 'b', state: 'done' })).toBe(4);
    expect(metricValue(text, 'jobs_total', { queue: 'c' })).toBeUndefined();
    expect(metricSamples(text, 'jobs_total')).toHaveLength(2);
    expect(metricValue(text, 'uptime_seconds')).toBe(12.5);
  });

  it('serves process metrics unless turned off, and every series carries the service label', async () => {
    const withDefaults = createServiceMetrics('svc');
    const text = await withDefaults.registry.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total\{service="svc"\}/m);
    const without = createServiceMetrics('svc', { defaultMetrics: false });
    expect(await without.registry.metrics()).not.toContain('process_cpu');
  });
});
