// What a client may read of an upstream's error text (docs/api.md 1.3): never a credential.
import { maskUpstreamText } from '../src/features/relay/upstream-errors';

describe('maskUpstreamText', () => {
  it('masks the whole key and each part of a composite one (an AWS key pair with its session token)', () => {
    const key = 'AKIDEXAMPLE0001|wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY|FwoGZXIvYXdzEJr//////////session';
    const text = 'The security token FwoGZXIvYXdzEJr//////////session for AKIDEXAMPLE0001 and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const masked = maskUpstreamText(text, { key });
    for (const part of key.split('|')) expect(masked).not.toContain(part);
    expect(masked).toBe('The security token [redacted] for [redacted] and secret [redacted]');
  });

  it('masks URLs and well-known key shapes, and leaves short pieces of a key alone', () => {
    expect(maskUpstreamText('see https://internal.example/x with sk-abcdefgh1234 and Bearer ya29.a0ARrdaM12345', { key: 'a|bc' })).toBe(
      'see [url] with [redacted] and [redacted]',
    );
  });
});
