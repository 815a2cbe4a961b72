// Tracing in tests: spans recorded in memory by an in-process service, or received over OTLP/HTTP
// from service processes (OTEL_EXPORTER_OTLP_ENDPOINT pointed at a loopback receiver).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTracing } from '@modelgate/telemetry';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';

export type { ReadableSpan };

export interface RecordedSpans {
  /** Every span ended since the start (or the last clear). */
  spans(): ReadableSpan[];
  clear(): void;
  /** Unregisters the tracer: services built afterwards trace nothing. */
  stop(): Promise<void>;
}

/** Turns tracing on for this process, each span recorded as it ends. Start it before building the service. */
export async function recordSpans(serviceName: string): Promise<RecordedSpans> {
  const exporter = new InMemorySpanExporter();
  const stop = await startTracing({ serviceName, endpoint: undefined, exporter });
  return { spans: () => exporter.getFinishedSpans(), clear: () => exporter.reset(), stop };
}

/** One span as OTLP/JSON carries it (ids in hex), with its service and attributes flattened. */
export interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: (Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}

function attributesOf(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue]),
  );
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

/** A loopback OTLP/HTTP receiver of JSON trace exports (`POST /v1/traces`). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !req.headers['content-type']?.startsWith('application/json')) {
        res.writeHead(404).end();
        return;
      }
      for (const resourceSpans of (JSON.parse(text) as OtlpExport).resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({ service, name: span.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', attributes: attributesOf(span.attributes) });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
