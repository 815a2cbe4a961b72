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

/** An image generation request in the internal form, for providers that translate it (docs/api.md 2.13). */
export interface ImageRequest {
  prompt: string;
  /** Images asked for (OpenAI's `n`, 1 when absent). */
  n: number;
  /** OpenAI's `size` (`1024x1024`, `1536x1024`, `auto` ...), when the client named one. */
  size?: string;
  /** OpenAI's `quality` (`low`, `medium`, `high`, `hd`, `standard`, `auto`), when the client named one. */
  quality?: string;
}

/** A translated image answer: the images as base64 with their media type, and the tokens reported. */
export interface ImageResponse {
  images: { b64: string; mediaType: string }[];
  /** Text the model answered beside the images (a Gemini image model may explain or refuse). */
  text?: string;
  /** Reported input and output tokens; undefined when the answer reports none. */
  usage?: { promptTokens: number; completionTokens: number };
}
