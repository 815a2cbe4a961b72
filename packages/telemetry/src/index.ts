// Tracing for the services. The apps bundle this package but require @opentelemetry/api from their own
// folder: each declares it at the version the SDK here uses, since a second copy of the API would
// not see the provider the SDK registered.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

export type { Context, Span };

/** The attribute every span of a request carries: the X-Request-Id the edge set or kept. */
export const REQUEST_ID_ATTRIBUTE = 'modelgate.request_id';

export interface TracingOptions {
  /** `service.name` of every span (OTEL_SERVICE_NAME, else the service's own name). */
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: spans are sent to `{endpoint}/v1/traces` (OTLP over HTTP, JSON). */
  endpoint: string | undefined;
  /** Tests: spans go to this exporter, one by one as they end, instead of an OTLP endpoint. */
  exporter?: SpanExporter;
}

/** Flushes the spans not yet exported and unregisters the tracer. */
export type StopTracing = () => Promise<void>;

// The started provider's own tracer: one from the global API would stay bound to the first provider.
let tracer: Tracer = trace.getTracer('modelgate');
let enabled = false;

/**
 * Whether spans are recorded. Off (no endpoint): nothing is loaded or registered, and every caller
 * skips its tracing on this one check, so an untraced service pays nothing per request.
 */
export function tracingEnabled(): boolean {
  return enabled;
}

const stopNothing: StopTracing = () => Promise.resolve();

/** Loads the SDK and registers the tracer provider when an endpoint (or a test's exporter) is given. */
export async function startTracing(options: TracingOptions): Promise<StopTracing> {
  const { serviceName, endpoint, exporter } = options;
  if (endpoint === undefined && exporter === undefined) return stopNothing;
  const { registerProvider } = await import('./provider');
  const provider = registerProvider({ serviceName, endpoint, exporter });
  tracer = provider.getTracer('modelgate');
  enabled = true;
  return async () => {
    enabled = false;
    try {
      await provider.shutdown();
    } finally {
      trace.disable();
      context.disable();
      propagation.disable();
    }
  };
}

/** The trace context an incoming request carries in `traceparent` / `tracestate` (the root when none). */
export function contextFromHeaders(headers: IncomingHttpHeaders): Context {
  return propagation.extract(ROOT_CONTEXT, headers, {
    get: (carrier, key) => carrier[key],
    keys: (carrier) => Object.keys(carrier),
  });
}


/** W3C trace context as a queue job carries it, so the job's span continues its producer's trace. */
export type TraceHeaders = { traceparent: string; tracestate?: string };

/**
 * The `traceparent` (and `tracestate`) naming `parent`'s span, for a job queued under it; undefined
 * when tracing is off or `parent` has no span, so an untraced job carries nothing.
 */
export function traceHeadersOf(parent: Context | undefined): TraceHeaders | undefined {
  if (!enabled || !parent) return undefined;
  // The W3C propagator sets these two keys only, `tracestate` when there is one.
  const headers: Partial<TraceHeaders> = {};
  propagation.inject(parent, headers, {
    set: (carrier, key, value) => {
      carrier[key as keyof TraceHeaders] = value;
    },
  });
  return headers.traceparent === undefined ? undefined : (headers as TraceHeaders);
}

/** Sets `traceparent` (and `tracestate`) naming `span` as the parent of what the headers go to. */
export function injectTraceHeaders(span: Span, headers: Record<string, string | string[] | undefined>): void {
  Object.assign(headers, traceHeadersOf(trace.setSpan(ROOT_CONTEXT, span)));
}

/**
 * The context code runs in now when tracing is on (a request's, under traceRequests; a job's, under
 * traceJobs), for a producer far from the request's `res`.
 */
export function activeTraceContext(): Context | undefined {
  return enabled ? context.active() : undefined;
}

/** A child span of `parent` (its span is the new span's parent). */
export function startSpan(parent: Context, name: string, attributes?: Attributes): Span {
  return tracer.startSpan(name, { attributes }, parent);
}

/**
 * Marks the span failed (it still has to be ended): an error gives its type and message, anything
 * else is the `error.type` itself (an HTTP status).
 */
export function failSpan(span: Span, err: unknown): void {
  if (err instanceof Error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    span.setAttribute('error.type', err.name);
    return;
  }
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', String(err));
}

/** Ends `span` when `work` settles (failed if it rejects); without a span, `work` itself. */
export function endWhenSettled<T>(span: Span | undefined, work: Promise<T>): Promise<T> {
  if (!span) return work;
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      failSpan(span, err);
      span.end();
      throw err;
    },
  );
}

function pathOf(url: string | undefined): string {
  const query = url?.indexOf('?') ?? -1;
  // Without the query: Gemini's `?key=` is a credential.
  return query === -1 ? (url ?? '/') : url!.slice(0, query);
}

/**
 * The server span of one incoming request, continuing its `traceparent`; ended when the answer
 * ends (or the connection closes first).
 */
export function startServerSpan(req: IncomingMessage, res: ServerResponse, requestId: string): Span {
  const method = req.method ?? 'GET';
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': pathOf(req.url), [REQUEST_ID_ATTRIBUTE]: requestId } },
    contextFromHeaders(req.headers),
  );
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (!res.writableFinished) span.setAttribute('modelgate.aborted', true);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  return span;
}

const TRACE_CONTEXT = 'traceContext';

type RequestWithId = IncomingMessage & { requestId?: string };
type ResponseWithLocals = ServerResponse & { locals: Record<string, unknown> };

/**
 * Express-style middleware (after the request id's): a server span per request, its context kept
 * in `res.locals` for the request's own spans and made the active context for the rest of the chain.
 * Only installed when tracing is on.
 */
export function traceRequests() {
  return (req: RequestWithId, res: ResponseWithLocals, next: () => void): void => {
    const traced = trace.setSpan(ROOT_CONTEXT, startServerSpan(req, res, req.requestId ?? ''));
    res.locals[TRACE_CONTEXT] = traced;
    context.with(traced, next);
  };
}

/** The request's trace context when tracing is on (see traceRequests), else undefined. */
export function traceContextOf(res: { locals: Record<string, unknown> }): Context | undefined {
  return res.locals[TRACE_CONTEXT] as Context | undefined;
}

/** What a queue job's span names: BullMQ's Job has these; `data.trace` is its producer's context, when known. */
interface TracedJob {
  id?: string | undefined;
  name: string;
  attemptsMade: number;
  data: { trace?: TraceHeaders | undefined };
}

/**
 * A job processor with a span per job attempt when tracing is on; the processor itself when off. The
 * span is a child of the producer's span the job carries, else the root of a trace of its own.
 */
export function traceJobs<J extends TracedJob, R>(queue: string, processor: (job: J) => Promise<R>): (job: J) => Promise<R> {
  if (!enabled) return processor;
  return (job) => {
    // Read before the payload is validated: the propagator ignores a malformed traceparent.
    const producer = job.data.trace;
    const span = tracer.startSpan(
      `${queue} process`,
      {
        kind: SpanKind.CONSUMER,
        attributes: { 'messaging.system': 'bullmq', 'messaging.destination.name': queue, 'messaging.message.id': job.id ?? '', 'modelgate.job_name': job.name, 'modelgate.attempt': job.attemptsMade + 1 },
      },
      producer ? contextFromHeaders(producer) : ROOT_CONTEXT,
    );
    return context.with(trace.setSpan(ROOT_CONTEXT, span), () => endWhenSettled(span, processor(job)));
  };
}
