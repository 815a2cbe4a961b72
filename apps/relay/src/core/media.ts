const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

/**
 * The media type and base64 data of a `data:` URL; percent-encoded data is re-encoded as base64
 * (every provider takes inline data as base64). Undefined when the URL is not a well-formed one.
 * The media type is '' when the URL names none.
 */
export function dataUrlContent(url: string): { mediaType: string; data: string } | undefined {
  const match = DATA_URL.exec(url);
  if (!match) return undefined;
  const [, mediaType = '', parameters = '', data = ''] = match;
  if (parameters.split(';').includes('base64')) return { mediaType, data };
  try {
    return { mediaType, data: Buffer.from(decodeURIComponent(data), 'utf8').toString('base64') };
  } catch {
    return undefined;
  }
}
