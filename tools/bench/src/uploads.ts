import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PcmFormat, pcmBytesPerSecond, WAV_HEADER_BYTES, wavHeader } from '@modelgate/testing/fake-upstream';
import type { LoadResult } from './load';
import type { RssGrowth } from './process-stats';
import { type Call, MEDIA_MODELS } from './requests';

/** The audio files of the transcription-upload case, MB: many small uploads for CPU per call, one large one for memory. */
export const UPLOAD_MB = { small: 1, large: 20 } as const;

/** Connections of the small uploads: a few, as each is a megabyte through every process on two cores. */
export const UPLOAD_CONNECTIONS = 4;

const MB = 1024 * 1024;
/** 24 kHz 16-bit mono PCM: 1 MB is about 22 s of audio, 20 MB about 7 minutes. */
const PCM: PcmFormat = { sampleRate: 24_000, bitsPerSample: 16 };
const BYTES_PER_SECOND = pcmBytesPerSecond(PCM);
const BOUNDARY = '----modelgate-bench-upload';

/** A transcription request's multipart body, in a file: each request streams it from disk. */
export interface UploadBody {
  path: string;
  /** Size of the whole body. */
  bytes: number;
  /** Size of the audio file it carries. */
  fileMb: number;
}

/** What the transcription-upload case measured on one target. */
export interface UploadResult {
  /** Uploads of `smallMb` MB at UPLOAD_CONNECTIONS connections (closed loop), with CPU per call. */
  load: LoadResult;
  smallMb: number;
  /** One upload of `largeMb` MB alone. */
  large: LoadResult;
  largeMb: number;
  /** How far the RSS of each gateway process the large upload passed rose while it ran. */
  rssGrowth: RssGrowth[];
}

/** One second of a 440 Hz tone. */
function toneSecond(): Buffer {
  const second = Buffer.alloc(BYTES_PER_SECOND);
  for (let i = 0; i < PCM.sampleRate; i++) second.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / PCM.sampleRate)), i * 2);
  return second;
}

/**
 * Writes the body of a transcription of a `megabytes` MB WAV file: `model` first (as the SDKs send
 * it, so the relay can start the upstream call as the file arrives), then the file, a second at a time.
 */
export function writeUploadBody(dir: string, megabytes: number): UploadBody {
  const path = join(dir, `transcription-${megabytes}mb.multipart`);
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${MEDIA_MODELS.transcriptions}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bench-${megabytes}mb.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const dataBytes = megabytes * MB - WAV_HEADER_BYTES;
  const second = toneSecond();
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    writeSync(fd, wavHeader(dataBytes, PCM));
    for (let written = 0; written < dataBytes; written += second.length) writeSync(fd, second, 0, Math.min(second.length, dataBytes - written));
    writeSync(fd, tail);
  } finally {
    closeSync(fd);
  }
  return { path, bytes: head.length + megabytes * MB + tail.length, fileMb: megabytes };
}

/** The small and the large upload body in a temporary directory, removed when `use` is done. */
export async function withUploadBodies<T>(use: (bodies: Record<keyof typeof UPLOAD_MB, UploadBody>) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-upload-'));
  try {
    return await use({ small: writeUploadBody(dir, UPLOAD_MB.small), large: writeUploadBody(dir, UPLOAD_MB.large) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type TranscriptionAnswer = { text?: unknown; usage?: { seconds?: unknown } };

/**
 * `POST /v1/audio/transcriptions` of the file in `body` with whisper-1 (the OpenAI channel through
 * the gateway; the fake answers the same directly), its body streamed from disk. The answer must
 * report the seconds heard, which the call is priced by.
 */
export function uploadCall(origin: string, key: string, body: UploadBody): Call {
  return {
    origin,
    path: '/v1/audio/transcriptions',
    headers: {
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'content-length': String(body.bytes),
      authorization: `Bearer ${key}`,
    },
    body: () => createReadStream(body.path),
    dialect: 'openai',
    isAnswer: (answer) => {
      const { text, usage } = answer as TranscriptionAnswer;
      return typeof text === 'string' && typeof usage?.seconds === 'number' && usage.seconds > 0;
    },
  };
}

/** MB of audio uploaded per second of a load of `megabytes` MB uploads. */
export const uploadMbPerSecond = (result: LoadResult, megabytes: number): number => (result.ok * megabytes * 1000) / result.durationMs;
