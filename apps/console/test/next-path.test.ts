import { localNextPath } from '../web/src/lib/next-path';

const ORIGIN = 'https://gateway.example';

describe('the sign-in page\'s ?next=', () => {
  test.each([
    ['/keys', '/keys'],
    ['/usage?type=2&p=3#top', '/usage?type=2&p=3#top'],
    ['/admin/../keys', '/keys'],
  ])('follows a local path: %s', (next, expected) => {
    expect(localNextPath(next, ORIGIN)).toBe(expected);
  });

  test.each([
    '//evil.example/phish',
    '/\\evil.example/phish',
    '/\t/evil.example',
    '/\n\\evil.example',
    'https://evil.example/',
    'https://gateway.example/keys',
    'javascript:alert(1)',
    'keys',
    '/.//evil.example',
    '',
  ])('refuses anything else and goes home: %j', (next) => {
    expect(localNextPath(next, ORIGIN)).toBe('/');
  });

  test('goes home without a next', () => {
    expect(localNextPath(null, ORIGIN)).toBe('/');
  });
});
