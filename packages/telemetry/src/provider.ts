// The SDK and the OTLP exporter, loaded only when tracing is on (see startTracing): an untraced
// service does not even load them.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';

export interface ProviderOptions {
  serviceName: string;
  /** Spans go here one by one as they end; else in batches to the OTLP endpoint. */
  exporter?: SpanExporter;
  endpoint?: string;
}

/**
 * Registers the global tracer provider, W3C TraceContext propagator and AsyncLocalStorage context
 * manager; spans go to `{endpoint}/v1/traces` as OTLP/HTTP JSON.
 */
export function registerProvider({ serviceName, exporter, endpoint }: ProviderOptions): TracerProvider {
  const spanProcessor = exporter
    ? new SimpleSpanProcessor({ exporter })
    : new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${(endpoint ?? '').replace(/\/+$/, '')}/v1/traces` }) });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [spanProcessor],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return provider;
}
