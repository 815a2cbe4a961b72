import { isHttpsAddress, normalizeOptionValue, parseOptions, parsePublicAddress } from '../src';

describe('the public address (ServerAddress, PUBLIC_URL)', () => {
  it('accepts an absolute http(s) URL, with or without a path, in the form the URL parser prints', () => {
    expect(parsePublicAddress('https://gateway.example.com')).toBe('https://gateway.example.com');
    expect(parsePublicAddress('HTTPS://Gateway.Example.com:443')).toBe('https://gateway.example.com');
    expect(parsePublicAddress('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(parsePublicAddress('https://example.com/modelgate')).toBe('https://example.com/modelgate');
  });

  it.each([
    ['gateway.example.com', /absolute URL/],
    ['/wallet', /absolute URL/],
    ['ftp://example.com', /http:\/\/ or https:\/\//],
    ['javascript:alert(1)', /http:\/\/ or https:\/\//],
    ['https://example.com/', /must not end with a slash/],
    ['https://example.com/modelgate/', /must not end with a slash/],
    ['https://user:secret@example.com', /user name or password/],
    ['https://example.com?next=x', /query or fragment/],
    ['https://example.com#top', /query or fragment/],
  ])('refuses %j', (text, message) => {
    expect(() => parsePublicAddress(text)).toThrow(message);
  });

  it('is the ServerAddress option: stored normalised, refused with the reason, defaulting to the local edge', () => {
    expect(normalizeOptionValue('ServerAddress', 'https://Gateway.example.com')).toBe('https://gateway.example.com');
    expect(() => normalizeOptionValue('ServerAddress', 'https://gateway.example.com/')).toThrow(/ServerAddress: must not end with a slash/);
    expect(() => normalizeOptionValue('ServerAddress', 42)).toThrow(/ServerAddress: must be a string/);
    expect(parseOptions([]).ServerAddress).toBe('http://127.0.0.1:3000');
    expect(parseOptions([{ key: 'ServerAddress', value: 'https://pay.example.com' }]).ServerAddress).toBe('https://pay.example.com');
  });

  it('tells an https address apart', () => {
    expect(isHttpsAddress('https://gateway.example.com')).toBe(true);
    expect(isHttpsAddress('http://127.0.0.1:3000')).toBe(false);
  });
});
