import { AppError } from '@modelgate/errors';
import type { z } from 'zod';

/** First zod issue -> 400 `invalid_request` naming the field (CONTRACT 1.1). */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const field = [...issue.path, ...keys.slice(0, 1)].join('.');
  const message =
    issue.code === 'unrecognized_keys'
      ? `unknown field: ${keys.join(', ')}`
      : `${field || 'body'}: ${issue.message}`;
  throw new AppError('invalid_request', message, { param: field || null });
}

/** Pagination query of CONTRACT 1.1: `p` 1-based, `page_size` default 10, max 100. */
export function pageOf(query: Record<string, unknown>): { page: number; pageSize: number; skip: number } {
  const page = Math.max(1, Number.parseInt(String(query.p ?? '1'), 10) || 1);
  const requested = Number.parseInt(String(query.page_size ?? '10'), 10) || 10;
  const pageSize = Math.min(100, Math.max(1, requested));
  return { page, pageSize, skip: (page - 1) * pageSize };
}
