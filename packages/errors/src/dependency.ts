/**
 * Whether a failure means a backing service (PostgreSQL, Redis) is unreachable or refusing work, as
 * opposed to a bug or refused data: docs/api.md 1.1 answers the first with 503, the second with 500.
 *
 * The telling part is rarely the error itself: Prisma 7 reports a PostgreSQL outage as P2010 / P2039
 * with the driver adapter's error in `meta.driverAdapterError` (whose `cause` has the SQLSTATE or a
 * connection kind), libraries wrap with `cause`, and pg reports a dual-stack refusal as an
 * AggregateError. So every layer is read: `cause`, `meta.driverAdapterError`, `errors`.
 */

/** Prisma's own codes for an unreachable, refusing or exhausted database (not schema or query bugs). */
const PRISMA_UNAVAILABLE = new Set([
  'P1000', // authentication failed
  'P1001', // can't reach the server
  'P1002', // the server timed out
  'P1003', // database does not exist
  'P1008', // operations timed out
  'P1010', // access denied
  'P1011', // TLS connection error
  'P1017', // the server closed the connection
  'P2024', // timed out fetching a connection from the pool
]);

/** `@prisma/driver-adapter-utils` error kinds that concern the connection, not the query. */
const ADAPTER_UNAVAILABLE = new Set([
  'DatabaseNotReachable',
  'DatabaseDoesNotExist',
  'DatabaseAccessDenied',
  'AuthenticationFailed',
  'TlsConnectionError',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * Messages without a code: pg's lost or timed-out connections and exhausted pool; ioredis with the
 * connection down, the offline queue off, a command past `commandTimeout`, or out of retries.
 */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Stream isn't writeable|Command timed out|Command aborted due to connection close|Reached the max retries per request)/;

/** Redis replies that mean the server cannot serve now (loading, failing over, out of memory, busy script). */
const REDIS_UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|CLUSTERDOWN|TRYAGAIN|OOM|NOREPLICAS) /;

/** How deep wrappers are followed: a real chain is 2-4 levels; this bounds a cyclic or absurd one. */
const MAX_DEPTH = 8;

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null;
}

/** The errors an error wraps, in the places the libraries we use put them. */
function wrapped(node: Node): unknown[] {
  const inner: unknown[] = [];
  if (node.cause !== undefined) inner.push(node.cause);
  const meta = node.meta;
  if (isNode(meta) && meta.driverAdapterError !== undefined) inner.push(meta.driverAdapterError);
  if (Array.isArray(node.errors)) inner.push(...(node.errors as unknown[]));
  return inner;
}

/** Visits `err` and everything it wraps, depth-first; stops when `visit` returns true. */
function some(err: unknown, visit: (node: Node) => boolean): boolean {
  const seen = new Set<unknown>();
  const walk = (value: unknown, depth: number): boolean => {
    if (!isNode(value) || seen.has(value) || depth > MAX_DEPTH) return false;
    seen.add(value);
    return visit(value) || wrapped(value).some((inner) => walk(inner, depth + 1));
  };
  return walk(err, 0);
}

/**
 * The SQLSTATE of the first PostgreSQL error in the chain: pg's own error (a `code` with a
 * `severity`) or the driver adapter's (`originalCode`). Prisma's P-codes are never read as one.
 */
function sqlStateOfNode(node: Node): string | undefined {
  if (typeof node.originalCode === 'string') return node.originalCode;
  if (typeof node.code === 'string' && typeof node.severity === 'string' && /^[0-9A-Z]{5}$/.test(node.code)) return node.code;
  return undefined;
}

export function sqlStateOf(err: unknown): string | undefined {
  let state: string | undefined;
  some(err, (node) => (state = sqlStateOfNode(node)) !== undefined);
  return state;
}

/**
 * SQLSTATE classes 08 (connection exception), 53 (insufficient resources: too many connections,
 * out of memory or disk), 57P0x (admin or crash shutdown, cannot connect now, database dropped), and
 * any FATAL or PANIC error: the server ended the session (55000 "database is not currently
 * accepting connections" is one; 55000 as a plain ERROR is a query's problem).
 */
function sqlStateUnavailable(node: Node): boolean {
  const state = sqlStateOfNode(node);
  if (state === undefined) return false;
  if (state.startsWith('08') || state.startsWith('53') || state.startsWith('57P0')) return true;
  return node.severity === 'FATAL' || node.severity === 'PANIC';
}

function nodeUnavailable(node: Node): boolean {
  const code = node.code;
  if (typeof code === 'string' && (PRISMA_UNAVAILABLE.has(code) || NETWORK_CODES.has(code))) return true;
  if (typeof node.kind === 'string' && ADAPTER_UNAVAILABLE.has(node.kind)) return true;
  if (sqlStateUnavailable(node)) return true;
  if (node.name === 'MaxRetriesPerRequestError') return true;
  const message = node.message;
  return typeof message === 'string' && (UNAVAILABLE_MESSAGE.test(message) || REDIS_UNAVAILABLE_REPLY.test(message));
}

/** PostgreSQL or Redis could not serve the request (as opposed to a bug): 503, retry later. */
export function isDependencyUnavailable(err: unknown): boolean {
  return some(err, nodeUnavailable);
}
