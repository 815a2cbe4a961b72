import { AppError, requestTooLarge } from '@modelgate/errors';

/** Raised by the edge itself to abort an upstream request that went silent or never connected. */
export class UpstreamTimeoutError extends Error {
  constructor(readonly phase: 'connect' | 'idle') {
    super(`upstream ${phase} timeout`);
    this.name = 'UpstreamTimeoutError';
  }
}

/** Raised while streaming a chunked request body that grows past the limit. */
export class RequestBodyTooLargeError extends Error {
  constructor() {
    super('request body too large');
    this.name = 'RequestBodyTooLargeError';
  }
}

export type FailureReason = 'unreachable' | 'timeout' | 'too_large';

export interface ProxyFailure {
  reason: FailureReason;
  error: AppError;
}

/** What the client is told when proxying failed before any response byte was sent. */
export function classifyProxyFailure(err: unknown, maxBodyMb: number): ProxyFailure {
  if (err instanceof RequestBodyTooLargeError) return { reason: 'too_large', error: requestTooLarge(maxBodyMb) };
  if (err instanceof UpstreamTimeoutError) {
    return { reason: 'timeout', error: new AppError('gateway_timeout', 'service timed out', { cause: err }) };
  }
  // Refused, reset, unresolvable or hung-up connections: the service is down or restarting.
  return { reason: 'unreachable', error: new AppError('bad_gateway', 'service unavailable', { cause: err }) };
}
