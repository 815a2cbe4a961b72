import { AppError } from '@modelgate/errors';

/** A request body that must be a JSON object (docs/api.md 1.3: otherwise 400 invalid_json). */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json', 'request body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('invalid_json', 'request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
