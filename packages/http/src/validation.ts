import { AppError } from '@modelgate/errors';
import { pageQuery } from '@modelgate/schemas';
import { z } from 'zod';

export { MAX_PAGE } from '@modelgate/schemas';

const NUL = '\u0000';

/**
 * The path (zod style, `a.0.b`; '' for the input itself) of the first string in `input` that holds
 * U+0000, or of the object holding a key with one; undefined when there is none. Walked without
 * recursion: a deeply nested body must not overflow the stack.
 */
function nulPath(input: unknown): string | undefined {
  const pending: [unknown, string][] = [[input, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return path;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    // Pushed last to first, so that the first field in the input is reported.
    for (const [key, item] of Object.entries(value).reverse()) {
      if (key.includes(NUL)) return path;
      pending.push([item, path ? `${path}.${key}` : key]);
    }
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold U+0000, so a NUL in anything that may be stored or used in a query
 * would end as a 500: it is refused as 400 `invalid_request` naming the field. `fields`: only
 * these top-level fields are checked (a relay body forwards the rest to the provider and never
 * stores it); by default, every string and key of `input`.
 */
export function rejectNulCharacters(input: unknown, fields?: readonly string[]): void {
  const checked =
    fields === undefined || input === null || typeof input !== 'object'
      ? input
      : Object.fromEntries(fields.map((field) => [field, (input as Record<string, unknown>)[field]]));
  const path = nulPath(checked);
  if (path === undefined) return;
  throw new AppError('invalid_request', `${path || 'body'}: must not contain NUL characters (\\u0000)`, { param: path || null });
}

export interface ParseOptions {
  /** Only these top-level fields are checked for NUL characters (see `rejectNulCharacters`). */
  storedFields?: readonly string[];
}

/**
 * Every validation of client input goes through here: NUL characters first (see
 * `rejectNulCharacters`), then the schema; the first problem -> 400 `invalid_request` naming the
 * field (docs/api.md 1.1).
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, options: ParseOptions = {}): z.output<S> {
  rejectNulCharacters(input, options.storedFields);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  if (!issue) throw new AppError('invalid_request', 'body: invalid', { param: null });
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const field = [...issue.path, ...keys.slice(0, 1)].join('.');
  const message =
    issue.code === 'unrecognized_keys'
      ? `unknown field: ${keys.join(', ')}`
      : `${field || 'body'}: ${issue.message}`;
  throw new AppError('invalid_request', message, { param: field || null });
}

/**
 * Pagination query of docs/api.md 1.1: `p` from 1 to MAX_PAGE, `page_size` from 1 to 100 (default 10);
 * anything else is a 400 naming the parameter.
 */
export function pageOf(query: Record<string, unknown>): { page: number; pageSize: number; skip: number } {
  const { p: page, page_size: pageSize } = parseOrThrow(pageQuery, { p: query.p, page_size: query.page_size });
  return { page, pageSize, skip: (page - 1) * pageSize };
}
