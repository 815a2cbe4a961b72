/** A failed `/api` call: the envelope's `code` and `message` (docs/api.md 1.1), or why the answer was unreadable. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The envelope's machine code, e.g. `invalid_request`; `invalid_response` when the answer was not the expected JSON. */
    readonly code: string,
    message: string,
    /** Seconds from `Retry-After`, when the answer had one (429s). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}
