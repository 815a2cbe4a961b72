import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Counter, Histogram, Registry } from 'prom-client';
import { CountedCounter, CountedHistogram, createServiceMetrics, type MeteredRequest } from '../src';

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];

/** A registry with a default label, as the services' registries have. */
function registry(): Registry {
  const made = new Registry();
  made.setDefaultLabels({ service: 'test' });
  return made;
}

/** The labels, metric name and value of every sample `getMetricsAsJSON` gives. */
async function samples(from: Registry) {
  return (await from.getMetricsAsJSON()).flatMap((metric) =>
    metric.values.map((value) => ({
      name: (value as { metricName?: string }).metricName,
      labels: value.labels,
      value: value.value,
    })),
  );
}

describe('counted metrics', () => {
  it('print what a prom-client Histogram and Counter print for the same observations, default labels included', async () => {
    const counted = registry();
    const reference = registry();
    const took = { name: 'took_seconds', help: 'Took', labelNames: ['route', 'status'] as const, buckets: BUCKETS };
    const units = { name: 'units_total', help: 'Units', labelNames: ['model', 'type'] as const };
    const histogram = new CountedHistogram({ ...took, registers: [counted] });
    const counter = new CountedCounter({ ...units, registers: [counted] });
    const referenceHistogram = new Histogram({ ...took, registers: [reference] });
    const referenceCounter = new Counter({ ...units, registers: [reference] });

    // Bound before any observation (listed only once counted), labels given out of label-name order.
    const unused = histogram.labels({ status: '500', route: '/never' });
    const observations: Array<[string, string, number]> = [
      ['/a', '200', 0.0004],
      ['/b', '404', 0.05],
      ['/a', '200', 0.1],
      ['/a', '503', 400],
      ['/b', '404', 0.3],
    ];
    for (const [route, status, seconds] of observations) {
      histogram.labels({ status, route }).observe(seconds);
      referenceHistogram.labels(route, status).observe(seconds);
    }
    const increments: Array<[string, string, number]> = [
      ['m1', 'prompt', 3],
      ['m2', 'completion', 0.1],
      ['m1', 'prompt', 0.2],
      ['m1', 'completion', 1],
    ];
    for (const [model, type, by] of increments) {
      counter.labels({ type, model }).inc(by);
      referenceCounter.labels(model, type).inc(by);
    }
    expect(unused.count).toBe(0);

    const expected = await reference.metrics();
    expect(expected).toContain('took_seconds_bucket{le="0.1",service="test",route="/a",status="200"} 2');
    expect(expected).toContain('units_total{model="m1",type="prompt",service="test"} 3.2');
    expect(await counted.metrics()).toBe(expected);
    expect(await samples(counted)).toEqual(await samples(reference));

    // After a reset, series are listed again in the order counted anew.
    counted.resetMetrics();
    reference.resetMetrics();
    histogram.labels({ route: '/b', status: '404' }).observe(2);
    referenceHistogram.labels('/b', '404').observe(2);
    counter.labels({ model: 'm2', type: 'prompt' }).inc();
    referenceCounter.labels('m2', 'prompt').inc();
    expect(await counted.metrics()).toBe(await reference.metrics());
  });

  it('keep the service metrics printing what a prom-client Histogram printed', async () => {
    const metrics = createServiceMetrics('relay', { defaultMetrics: false });
    const reference = new Registry();
    reference.setDefaultLabels({ service: 'relay' });
    const referenceHistogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by route and status (count and latency)',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [reference],
    });
    const requests: Array<[string, string, number, number]> = [
      ['POST', '/v1/chat/completions', 200, 1.5],
      ['GET', '/healthz', 200, 0.0002],
      ['POST', '/v1/chat/completions', 429, 0.003],
      ['POST', '/v1/chat/completions', 200, 90],
    ];
    const now = jest.spyOn(performance, 'now');
    for (const [method, route, status, seconds] of requests) {
      const req = { method, originalUrl: route, route: { path: route }, baseUrl: '' } as unknown as MeteredRequest;
      const res = Object.assign(new EventEmitter(), { statusCode: status }) as unknown as ServerResponse;
      now.mockReturnValueOnce(1000);
      metrics.middleware(req, res, () => undefined);
      now.mockReturnValueOnce(1000 + seconds * 1000);
      res.emit('close');
      // The seconds as the middleware computes them, float rounding included.
      const observed = (1000 + seconds * 1000 - 1000) / 1000;
      referenceHistogram.labels(method, route, String(status)).observe(observed);
    }
    now.mockRestore();

    const expected = await reference.metrics();
    expect(expected).toContain(
      'http_request_duration_seconds_count{service="relay",method="POST",route="/v1/chat/completions",status="200"} 2',
    );
    expect(await metrics.registry.metrics()).toBe(expected);
  });
});
