import { type Context, traceHeadersOf } from '@modelgate/telemetry';
import { z } from 'zod';

/**
 * The `trace` field of every job payload: the producer's W3C trace context, so the job's span
 * continues the producer's trace. Optional, as jobs queued by older releases lack it; a malformed one
 * is dropped rather than failing the job.
 */
export const jobTraceSchema = z
  .object({ traceparent: z.string().max(256), tracestate: z.string().max(512).optional() })
  .optional()
  .catch(undefined);

/** `data` carrying `parent`'s trace context; `data` itself (no field) when tracing is off or nothing is traced. */
export function withJobTrace<T extends object>(data: T, parent: Context | undefined): T {
  const trace = traceHeadersOf(parent);
  return trace ? { ...data, trace } : data;
}
