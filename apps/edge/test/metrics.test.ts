import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Histogram, Registry } from 'prom-client';
import { createEdgeMetrics } from '../src/features/metrics/metrics';
import type { RouteFamily } from '../src/features/proxy/upstreams';

const NAME = 'edge_request_duration_seconds';

/** The lines of one metric in an exposition. */
function linesOf(exposition: string, name: string): string[] {
  return exposition.split('\n').filter((line) => line.replace(/^# (HELP|TYPE) /, '').startsWith(name));
}

describe('edge latency histogram exposition', () => {
  afterEach(() => jest.restoreAllMocks());

  it('prints what a prom-client Histogram prints for the same requests', async () => {
    const requests: Array<[RouteFamily, number, number]> = [
      ['v1', 200, 0.0004],
      ['api', 404, 0.03],
      ['v1', 200, 2],
      ['v1', 502, 400],
      ['console', 200, 0.0025],
    ];
    const metrics = createEdgeMetrics({ defaultMetrics: false });
    const referenceRegistry = new Registry();
    const reference = new Histogram({
      name: NAME,
      help: 'Requests on the public port, from arrival to the end of the answer, by route family and status class',
      labelNames: ['route', 'status_class'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [referenceRegistry],
    });
    const now = jest.spyOn(performance, 'now');
    for (const [route, status, seconds] of requests) {
      const res = Object.assign(new EventEmitter(), { headersSent: true, statusCode: status });
      now.mockReturnValueOnce(1000);
      metrics.timeRequest(route, res as unknown as ServerResponse);
      now.mockReturnValueOnce(1000 + seconds * 1000);
      res.emit('close');
      reference.observe({ route, status_class: `${String(status)[0]}xx` }, seconds);
    }
    // A client that left before any answer is not counted.
    const left = Object.assign(new EventEmitter(), { headersSent: false, statusCode: 200 });
    metrics.timeRequest('v1', left as unknown as ServerResponse);
    left.emit('close');

    const expected = linesOf(await referenceRegistry.metrics(), NAME);
    expect(expected).toContain(`${NAME}_count{route="v1",status_class="2xx"} 2`);
    expect(linesOf(await metrics.registry.metrics(), NAME)).toEqual(expected);
  });
});
