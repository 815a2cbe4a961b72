import { API_OPERATIONS, type ApiOperation, type KnownApiOperation } from '@modelgate/schemas/api';
import type { z } from 'zod';
import { ApiError } from './errors';

type KeyOf<Op> = Op extends { method: infer Method extends string; path: infer Path extends string } ? `${Method} ${Path}` : never;

/** An operation's name for `call`: its method and path as in API_OPERATIONS, e.g. `'post /api/token'`. */
export type ApiOperationKey = KeyOf<KnownApiOperation>;

/** The exact operation a key names. */
export type OperationOf<Key extends ApiOperationKey> = { [Op in KnownApiOperation as KeyOf<Op>]: Op }[Key];

/** One request part: required when its schema's input has a required field, absent when the operation has no such schema. */
type Part<Op, Field extends 'body' | 'query' | 'params'> = Op extends { [F in Field]: infer Schema extends z.ZodType }
  ? object extends z.input<Schema>
    ? { [F in Field]?: z.input<Schema> }
    : { [F in Field]: z.input<Schema> }
  : { [F in Field]?: never };

/** What `call` sends: the operation's path parameters, query and JSON body, typed from its schemas' input. */
export type OperationInput<Key extends ApiOperationKey> = Part<OperationOf<Key>, 'body'> &
  Part<OperationOf<Key>, 'query'> &
  Part<OperationOf<Key>, 'params'>;

/** What `call` resolves to: the envelope's `data`; for a raw JSON answer the whole body; for a CSV export its text. */
export type OperationResult<Key extends ApiOperationKey> =
  OperationOf<Key> extends { raw: 'text/csv' } ? string : z.output<OperationOf<Key>['response']>;

type InputArgs<Key extends ApiOperationKey> = object extends OperationInput<Key> ? [input?: OperationInput<Key>] : [input: OperationInput<Key>];

export interface ApiClientOptions {
  /** Where `/api` is served; '' (the default) for the page's own origin. */
  baseUrl?: string;
  /** Defaults to the global fetch; pass one that keeps cookies to hold a session outside a browser. */
  fetch?: typeof fetch;
  /** Sent as `New-Api-User`, which session and access-token calls need (docs/api.md 1.2). */
  userId?: number;
  /** A user's access token (`GET /api/user/token`), sent as `Authorization: Bearer`. */
  accessToken?: string;
  /** Browser cookie mode; 'include' (the default) sends the session cookie to another origin too. */
  credentials?: RequestInit['credentials'];
}

const operationsByKey = new Map<string, ApiOperation>(API_OPERATIONS.map((operation) => [`${operation.method} ${operation.path}`, operation]));

/** A `/api` client for the browser and Node, typed from the operation table in @modelgate/schemas. */
export class ApiClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly credentials: RequestInit['credentials'];
  /** Sent as `New-Api-User`; set it after logging in with a session. */
  userId?: number;
  accessToken?: string;

  constructor(options: ApiClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
    // Bound: a detached `window.fetch` throws "Illegal invocation".
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.credentials = options.credentials ?? 'include';
    this.userId = options.userId;
    this.accessToken = options.accessToken;
  }

  /**
   * Calls one operation, e.g. `client.call('post /api/token', { body: { name: 'ci' } })`. Resolves to the
   * envelope's `data` (not re-validated: the service's answers are the schemas' output); throws ApiError
   * for a failure envelope or an answer that is not the JSON (or CSV) the operation promises.
   */
  async call<Key extends ApiOperationKey>(key: Key, ...[input]: InputArgs<Key>): Promise<OperationResult<Key>> {
    const operation = operationsByKey.get(key);
    if (!operation) throw new TypeError(`unknown /api operation: ${key}`);
    // Widened first: the union of every operation's input is too large for TypeScript to spell out.
    const { body, query, params } = ((input as unknown) ?? {}) as { body?: unknown; query?: Record<string, unknown>; params?: Record<string, unknown> };
    const headers: Record<string, string> = { Accept: operation.raw ?? 'application/json' };
    if (this.userId !== undefined) headers['New-Api-User'] = String(this.userId);
    if (this.accessToken) headers.Authorization = `Bearer ${this.accessToken}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await this.fetch(this.baseUrl + fillPath(operation.path, params) + queryString(query), {
      method: operation.method.toUpperCase(),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: this.credentials,
    });
    return (await readAnswer(operation, response)) as OperationResult<Key>;
  }
}

/** `/api/token/:id` with `{ id: '7' }` -> `/api/token/7`, each value URI-encoded. */
function fillPath(path: string, params: Record<string, unknown> = {}): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${path}`);
    return encodeURIComponent(String(value));
  });
}

/** `?a=1&b=x`, leaving out undefined values; '' when nothing is left. */
function queryString(query: Record<string, unknown> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.append(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

function retryAfterSeconds(response: Response): number | undefined {
  const seconds = Number(response.headers.get('Retry-After') ?? NaN);
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** The result of an answer, or the ApiError it stands for. */
async function readAnswer(operation: ApiOperation, response: Response): Promise<unknown> {
  const contentType = response.headers.get('Content-Type') ?? '';
  const retryAfter = retryAfterSeconds(response);
  if (operation.raw === 'text/csv' && response.ok && contentType.startsWith('text/csv')) return response.text();
  if (!contentType.includes('json')) {
    throw new ApiError(response.status, 'invalid_response', `expected ${operation.raw ?? 'application/json'}, got ${contentType || 'no content type'} (HTTP ${response.status})`, retryAfter);
  }
  let answer: unknown;
  try {
    answer = await response.json();
  } catch {
    throw new ApiError(response.status, 'invalid_response', `unreadable JSON answer (HTTP ${response.status})`, retryAfter);
  }
  if (operation.raw === 'application/json' && response.ok) return answer;
  if (!isEnvelope(answer)) throw new ApiError(response.status, 'invalid_response', `not an /api envelope (HTTP ${response.status})`, retryAfter);
  if (!answer.success || !response.ok) {
    throw new ApiError(response.status, typeof answer.code === 'string' ? answer.code : 'unknown_error', answer.message, retryAfter);
  }
  return answer.data;
}

interface Envelope {
  success: boolean;
  message: string;
  code?: unknown;
  data?: unknown;
}

function isEnvelope(value: unknown): value is Envelope {
  return typeof value === 'object' && value !== null && typeof (value as Envelope).success === 'boolean' && typeof (value as Envelope).message === 'string';
}
