import type { z } from 'zod';

/**
 * Who may call an operation (docs/api.md 1.2): roles are 1 user, 10 admin, 100 root; `session` is
 * the session cookie alone, without `New-Api-User`.
 */
export type ApiAuth = 'public' | 'session' | 'user' | 'admin' | 'root' | 'webhook';

/**
 * One `/api` operation: the single description the account service validates requests with and the
 * OpenAPI document (`GET /api/openapi.json`) is generated from.
 */
export interface ApiOperation {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Express style, e.g. `/api/token/:id`. */
  path: string;
  auth: ApiAuth;
  summary: string;
  body?: z.ZodType;
  /** An object schema: each property is one query parameter. */
  query?: z.ZodObject;
  /** An object schema: each property is one parameter of `path`. */
  params?: z.ZodObject;
  /** The envelope's `data` (docs/api.md 1.1); with `raw`, the whole answer body. */
  response: z.ZodType;
  /** Set when the answer is not an envelope: the Stripe webhook (JSON) and the log exports (CSV). */
  raw?: 'application/json' | 'text/csv';
  /** Set when every answer is a 302 for a browser (the sign-in redirects): where it leads. */
  redirect?: string;
}
