/**
 * Where to go after signing in: `next` when it is a path of this site, else `/`. Only a local path
 * counts (one `/`, then not `/` or `\`): `//x.com` and `/\x.com` are another site's addresses, and so
 * is anything that resolves to another origin once the URL parser drops tabs and newlines.
 */
export function localNextPath(next: string | null, origin: string): string {
  if (!next || !isLocalPath(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return '/';
  }
  const path = url.pathname + url.search + url.hash;
  return url.origin === origin && isLocalPath(path) ? path : '/';
}

function isLocalPath(path: string): boolean {
  return path.startsWith('/') && path[1] !== '/' && path[1] !== '\\';
}
