import { ApiClient, ApiError } from '@modelgate/client';

/**
 * The console's one `/api` client, on the page's own origin (the edge), with the session cookie.
 * The session provider sets `userId` (sent as New-Api-User) once it knows who is signed in.
 */
export const api = new ApiClient({ credentials: 'same-origin' });

/** A failed call's message for the user; the envelope's message is written for people already. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429 && error.retryAfter !== undefined) return `${error.message} (try again in ${error.retryAfter} s)`;
    return error.message;
  }
  return 'The gateway could not be reached. Check your connection and try again.';
}

export { ApiError };
