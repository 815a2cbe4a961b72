import type { Readable } from 'node:stream';
import type * as MusicMetadata from 'music-metadata';

/**
 * music-metadata, loaded on first use: with the ES module loader it brings up, it costs the
 * process ~11 MB of resident memory, which a relay that never hears audio need not carry.
 */
let musicMetadata: typeof MusicMetadata | undefined;

/**
 * An audio file's duration in seconds, read by music-metadata (docs/api.md 2.14): `size` unknown,
 * from the header of the bytes given (WAV, FLAC, MP3 with a Xing / VBRI header, MP4 with its index
 * first state it); `size` known, from the whole file, frame by frame where the header is silent.
 * Undefined when the file does not tell (or is not audio). The stream is consumed and closed.
 */
export async function audioDuration(file: Readable, mimeType: string | undefined, size?: number): Promise<number | undefined> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    musicMetadata ??= require('music-metadata') as typeof MusicMetadata;
    const { format } = await musicMetadata.parseStream(file, { mimeType, size }, { duration: size !== undefined, skipCovers: true, skipPostHeaders: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  } catch {
    return undefined;
  } finally {
    file.destroy();
  }
}
