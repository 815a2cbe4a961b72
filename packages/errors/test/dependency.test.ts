// The shapes below are what the libraries produced against a real server (PostgreSQL 17 through
// @prisma/adapter-pg 7.10, pg 8, ioredis 6); the services' outage tests produce them for real.
import { isDependencyUnavailable, sqlStateOf, toAppError } from '../src';

/** Prisma 7's known request error around the driver adapter's error, as adapter-pg reports it. */
function prismaError(prismaCode: string, adapterCause: Record<string, unknown>): Error {
  const adapterError = Object.assign(new Error(String(adapterCause.message ?? adapterCause.kind)), {
    name: 'DriverAdapterError',
    cause: adapterCause,
  });
  return Object.assign(new Error('Invalid `prisma.user.findFirst()` invocation'), {
    name: 'PrismaClientKnownRequestError',
    code: prismaCode,
    meta: { modelName: 'User', driverAdapterError: adapterError },
  });
}

function postgres(code: string, severity: string, message: string) {
  return { originalCode: code, originalMessage: message, kind: 'postgres', code, severity, message };
}

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDependencyUnavailable', () => {
  it.each([
    ['a query cut by pg_terminate_backend (57P01)', prismaError('P2010', postgres('57P01', 'FATAL', 'terminating connection due to administrator command'))],
    ['a database refusing connections (55000, FATAL)', prismaError('P2039', postgres('55000', 'FATAL', 'database "x" is not currently accepting connections'))],
    ['the server starting up (57P03)', prismaError('P2010', postgres('57P03', 'FATAL', 'the database system is starting up'))],
    ['too many connections (53300)', prismaError('P2010', { kind: 'TooManyConnections', cause: 'sorry, too many clients already' })],
    ['a connection failure (class 08)', prismaError('P2010', postgres('08006', 'ERROR', 'connection failure'))],
    ['a refused connection (P1001)', prismaError('P1001', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 1 })],
    ['a closed connection', prismaError('P2010', { kind: 'ConnectionClosed' })],
    ['an exhausted pool (pg-pool)', new Error('timeout exceeded when trying to connect')],
    ['a lost connection (pg)', new Error('Connection terminated unexpectedly')],
    ['a refused socket', withCode('connect ECONNREFUSED 127.0.0.1:6391', 'ECONNREFUSED')],
    ['pg refusing on every address', new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
    ['ioredis with the offline queue off', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['ioredis out of retries', Object.assign(new Error('Reached the max retries per request limit (which is 1).'), { name: 'MaxRetriesPerRequestError' })],
    ['ioredis past commandTimeout', new Error('Command timed out')],
    ['Redis loading its dataset', Object.assign(new Error('LOADING Redis is loading the dataset in memory'), { name: 'ReplyError' })],
    ['an outage wrapped by a library', new Error('could not store the session', { cause: new Error('Connection is closed.') })],
  ])('is true for %s', (_what, err) => {
    expect(isDependencyUnavailable(err)).toBe(true);
    expect(toAppError(err)).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it.each([
    ['refused data (22021, NUL byte)', prismaError('P2039', postgres('22021', 'ERROR', 'invalid byte sequence for encoding "UTF8": 0x00'))],
    ['a unique violation', prismaError('P2002', { kind: 'UniqueConstraintViolation', constraint: { fields: ['username'] } })],
    ['a query bug (division by zero)', prismaError('P2010', postgres('22012', 'ERROR', 'division by zero'))],
    ['55000 as a plain ERROR', prismaError('P2010', postgres('55000', 'ERROR', 'currval of sequence "s" is not yet defined in this session'))],
    ['a statement timeout', prismaError('P2010', postgres('57014', 'ERROR', 'canceling statement due to statement timeout'))],
    ['a Redis script error', Object.assign(new Error('ERR user_script:1: Script attempted to access nonexistent global variable'), { name: 'ReplyError' })],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'boom'],
    ['null', null],
  ])('is false for %s', (_what, err) => {
    expect(isDependencyUnavailable(err)).toBe(false);
  });

  it('ends on a cyclic cause chain', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(isDependencyUnavailable(a)).toBe(false);
  });

  it('leaves client errors of body parsers (ECONNABORTED with a 400) as 400', () => {
    const aborted = Object.assign(new Error('request aborted'), { status: 400, code: 'ECONNABORTED', type: 'request.aborted' });
    expect(toAppError(aborted).status).toBe(400);
  });
});

describe('sqlStateOf', () => {
  it("reads the driver adapter's SQLSTATE, never Prisma's own code", () => {
    expect(sqlStateOf(prismaError('P2039', postgres('22021', 'ERROR', 'invalid byte sequence')))).toBe('22021');
    expect(sqlStateOf(prismaError('P1001', { kind: 'DatabaseNotReachable' }))).toBeUndefined();
    expect(sqlStateOf(Object.assign(new Error('x'), { code: '23505', severity: 'ERROR' }))).toBe('23505');
  });
});
