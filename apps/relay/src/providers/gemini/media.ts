import { dataUrlContent } from '../../core/media';
import { AppError } from '@modelgate/errors';
import type { ImageSource, InlineImageSource } from '../../core/chat';
import type { GeminiPart } from './wire';

/** What Gemini is told a linked file is, by its extension (it does not sniff `fileUri` itself). */
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  mp4: 'video/mp4',
};

export const DEFAULT_IMAGE_MIME = 'image/jpeg';
export const DEFAULT_FILE_MIME = 'application/pdf';

function extensionOf(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url;
  }
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot + 1).toLowerCase();
}

function invalidDataUrl(): AppError {
  return new AppError('invalid_request', 'messages: a data URL is not valid', { param: 'messages' });
}

/**
 * An image or a document: inline data stays inline (`inlineData`), a link becomes `fileData` with
 * the type its extension names, `defaultMimeType` when it names none.
 */
export function mediaPart(source: ImageSource | InlineImageSource, defaultMimeType: string): GeminiPart {
  if (source.kind === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  if (source.url.startsWith('data:')) {
    const inline = dataUrlContent(source.url);
    if (!inline) throw invalidDataUrl();
    return { inlineData: { mimeType: inline.mediaType || defaultMimeType, data: inline.data } };
  }
  const mimeType = MIME_BY_EXTENSION[extensionOf(source.url)] ?? defaultMimeType;
  return { fileData: { mimeType, fileUri: source.url } };
}
