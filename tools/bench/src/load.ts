import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import type { CpuCost } from './process-stats';
import { Samples, type Summary, summarize } from './stats';

/** One HTTP request the generator repeats. */
export interface RequestSpec {
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** The body, or (an upload) a fresh stream of it for each request. */
  body: string | (() => Readable);
}

/** The body of one request of `spec`. */
export const bodyOf = (spec: RequestSpec): string | Readable => (typeof spec.body === 'string' ? spec.body : spec.body());

export interface LoadResult {
  connections: number;
  durationMs: number;
  /** Requests answered 2xx and read to the end. */
  ok: number;
  /** Non-2xx answers, connection failures and timeouts. */
  errors: number;
  /** One line per kind of error with its count, e.g. "HTTP 503 x12". */
  errorKinds: string[];
  requestsPerSecond: number;
  /** Milliseconds, sub-millisecond resolution. */
  latency: Summary;
  /** CPU microseconds per request by process, when measured. */
  cpuPerRequest?: CpuCost[];
  /** Share of the machine's CPU time given to other guests of the host during the case (%). */
  stealPercent?: number;
}

export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * A closed-loop load generator: `connections` keep-alive connections, each sending the next request
 * as soon as the previous answer was read (like autocannon, whose percentiles are whole
 * milliseconds: too coarse for a 1.5 ms budget). Latency runs from the request's start to the
 * answer's last byte. A load can run several times on its open connections (cases taking turns),
 * and `close` gives the outcome of all of them.
 */
export class RequestLoad {
  private readonly pool: Pool;
  private readonly latencies = new Samples();
  private readonly errorCounts = new Map<string, number>();
  private ok = 0;
  private activeMs = 0;

  constructor(
    private readonly spec: RequestSpec,
    private readonly connections: number,
  ) {
    this.pool = new Pool(spec.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
  }

  /** Runs for `durationMs`, or until this run has sent `requests` requests. */
  async run(durationMs: number, requests = Number.POSITIVE_INFINITY): Promise<void> {
    const { spec, pool } = this;
    const fail = (kind: string) => this.errorCounts.set(kind, (this.errorCounts.get(kind) ?? 0) + 1);
    const started = performance.now();
    const deadline = started + durationMs;
    let sentInRun = 0;
    const loop = async () => {
      while (performance.now() < deadline && sentInRun < requests) {
        sentInRun += 1;
        const sent = performance.now();
        try {
          const response = await pool.request({ path: spec.path, method: 'POST', headers: spec.headers, body: bodyOf(spec) });
          await response.body.arrayBuffer();
          if (response.statusCode >= 200 && response.statusCode < 300) {
            this.ok += 1;
            this.latencies.push(performance.now() - sent);
          } else {
            fail(`HTTP ${response.statusCode}`);
          }
        } catch (err) {
          fail((err as { code?: string }).code ?? (err as Error).name);
          // A refused connection fails at once: do not spin.
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    };
    await Promise.all(Array.from({ length: this.connections }, loop));
    this.activeMs += performance.now() - started;
  }

  async close(): Promise<LoadResult> {
    await this.pool.close();
    const errors = [...this.errorCounts.values()].reduce((a, b) => a + b, 0);
    return {
      connections: this.connections,
      durationMs: this.activeMs,
      ok: this.ok,
      errors,
      errorKinds: [...this.errorCounts].map(([kind, count]) => `${kind} x${count}`),
      requestsPerSecond: (this.ok / this.activeMs) * 1000,
      latency: summarize(this.latencies.toArray()),
    };
  }
}

/** One run of a request load, for `durationMs` or until it has sent `requests` requests. */
export async function runLoad(spec: RequestSpec, connections: number, durationMs: number, requests?: number): Promise<LoadResult> {
  const load = new RequestLoad(spec, connections);
  await load.run(durationMs, requests);
  return load.close();
}
