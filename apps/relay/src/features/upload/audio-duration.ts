import type { Readable } from 'node:stream';
import { parseStream } from 'music-metadata';

/**
 * An audio file's duration in seconds, read by music-metadata (docs/api.md 2.14): `size` unknown,
 * from the header of the bytes given (WAV, FLAC, MP3 with a Xing / VBRI header, MP4 with its index
 * first state it); `size` known, from the whole file, frame by frame where the header is silent.
 * Undefined when the file does not tell (or is not audio). The stream is consumed and closed.
 */
export async function audioDuration(file: Readable, mimeType: string | undefined, size?: number): Promise<number | undefined> {
  try {
    const { format } = await parseStream(file, { mimeType, size }, { duration: size !== undefined, skipCovers: true, skipPostHeaders: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  } catch {
    return undefined;
  } finally {
    file.destroy();
  }
}
