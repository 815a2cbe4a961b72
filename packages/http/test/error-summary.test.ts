import { describeError, errorSummary } from '../src';

/** How Prisma words a query on a table that does not exist yet: an empty first line, a code frame, the reason last. */
const PRISMA_MESSAGE = [
  '',
  'Invalid `prisma.user.findFirst()` invocation in',
  '/srv/apps/account/src/features/users/repository.ts:27:32',
  '',
  '  26 findRoot() {',
  '→ 27   return this.prisma.user.findFirst(',
  'The table `public.users` does not exist in the current database.',
].join('\n');

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('errorSummary / describeError', () => {
  it('takes the reason of a Prisma message, not its empty first line or code frame', () => {
    const err = withCode(PRISMA_MESSAGE, 'P2021');
    expect(errorSummary(err)).toBe('The table `public.users` does not exist in the current database.');
    expect(describeError(err)).toEqual({
      type: 'Error',
      code: 'P2021',
      message: 'The table `public.users` does not exist in the current database.',
    });
  });

  it('keeps the first line of other messages', () => {
    expect(errorSummary(new Error('connect ECONNREFUSED 127.0.0.1:6379\n    at stack'))).toBe('connect ECONNREFUSED 127.0.0.1:6379');
  });

  it('names an error that has no message by its type and code', () => {
    expect(errorSummary(withCode('', 'ECONNRESET'))).toBe('Error ECONNRESET');
    expect(errorSummary(new TypeError(''))).toBe('TypeError');
    expect(errorSummary('plain text')).toBe('plain text');
  });
});
