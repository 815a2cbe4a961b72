/** The 44-byte header of a PCM WAV file: what states its duration to a reader of audio files. */
export const WAV_HEADER_BYTES = 44;

/** A PCM format: mono, `bitsPerSample` 8 (unsigned) or 16 (signed little-endian). */
export interface PcmFormat {
  sampleRate: number;
  bitsPerSample: 8 | 16;
}

export const pcmBytesPerSecond = ({ sampleRate, bitsPerSample }: PcmFormat): number => (sampleRate * bitsPerSample) / 8;

/** The header of a mono PCM WAV whose samples take `dataBytes`. */
export function wavHeader(dataBytes: number, format: PcmFormat): Buffer {
  const blockAlign = format.bitsPerSample / 8;
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(WAV_HEADER_BYTES - 8 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(format.sampleRate, 24);
  header.writeUInt32LE(pcmBytesPerSecond(format), 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(format.bitsPerSample, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A WAV file of `seconds` of silence: its header states the duration (docs/api.md 2.14 prices audio by it). */
export function silentWav(seconds: number, format: PcmFormat): Buffer {
  const dataBytes = Math.round(seconds * pcmBytesPerSecond(format));
  // Silence is the middle value: 0x80 for unsigned 8-bit samples, 0 for signed 16-bit ones.
  return Buffer.concat([wavHeader(dataBytes, format), Buffer.alloc(dataBytes, format.bitsPerSample === 8 ? 0x80 : 0)]);
}
