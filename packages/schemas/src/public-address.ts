import { z } from 'zod';

/**
 * The gateway's public address (docs/api.md 3.7): the root option `ServerAddress` and the services'
 * `PUBLIC_URL`. Every link the gateway builds for a browser starts with it, so it is an absolute
 * http(s) URL with no trailing slash (links append `/path`), no credentials, query or fragment.
 * Returns the URL as the WHATWG parser prints it (host in lower case, default port dropped); throws
 * a message saying what is wrong.
 */
export function parsePublicAddress(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('must be an absolute URL such as https://gateway.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http:// or https:// URL');
  if (url.username !== '' || url.password !== '') throw new Error('must not contain a user name or password');
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(text)) throw new Error('must not contain a query or fragment');
  if (text.endsWith('/')) throw new Error('must not end with a slash');
  return url.pathname === '/' ? url.origin : `${url.origin}${url.pathname}`;
}

/** A public address as text, stored as `parsePublicAddress` prints it (option and environment alike). */
export const publicAddressText = z.string({ error: 'must be a string' }).transform((text, ctx) => {
  try {
    return parsePublicAddress(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** Whether browsers reach the gateway over TLS at this address (Secure cookies, HSTS). */
export function isHttpsAddress(address: string): boolean {
  return address.startsWith('https:');
}
