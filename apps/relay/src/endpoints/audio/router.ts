import { AppError } from '@modelgate/errors';
import type { DirectRoute } from '@modelgate/http';
import { transcriptionFieldsSchema } from '@modelgate/schemas/relay';
import { audioDuration } from '../../features/upload/audio-duration';
import { FILE_HEAD_BYTES, type MultipartUpload, type UploadedFile } from '../../features/upload/multipart-upload';
import { multipartRelayRoute, openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { SpeechCall } from './speech-call';
import { TranscriptionCall } from './transcription-call';
import { parseFormFields, parseSpeech } from '../../dialects/openai/media-requests';

/**
 * Bytes a second of audio is assumed to take when its header does not state its duration: 128
 * kbit/s, a common MP3 rate (lower rates reserve less than they cost; settlement charges the
 * real duration).
 */
const ASSUMED_AUDIO_BYTES_PER_SECOND = 16_000;

/** `POST /v1/audio/speech` (docs/api.md 2.13). */
export function speechRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/audio/speech', deps, (raw) => new SpeechCall(parseSpeech(raw), raw));
}

/**
 * The reservation's duration of an upload: its header's (docs/api.md 2.14), else its size at
 * ASSUMED_AUDIO_BYTES_PER_SECOND (the file's size when it is whole, else the request's declared
 * length, else the body limit).
 */
async function estimatedSeconds(upload: MultipartUpload, maxBodyMb: number, file: UploadedFile): Promise<number> {
  const stated = await audioDuration(upload.fileReader(file, FILE_HEAD_BYTES), file.contentType);
  if (stated !== undefined) return stated;
  const bytes = file.end === undefined ? (upload.declaredLength ?? maxBodyMb * 1024 * 1024) : file.end - file.start;
  return bytes / ASSUMED_AUDIO_BYTES_PER_SECOND;
}

function transcriptionRoute(path: string, surface: 'transcriptions' | 'translations', deps: RelayRouteDeps): DirectRoute {
  return multipartRelayRoute(path, deps, async (upload) => {
    const fields = parseFormFields(transcriptionFieldsSchema, upload.fields);
    const file = upload.files.find((part) => part.field === 'file');
    if (!file) throw new AppError('invalid_request', 'file: an audio file is required', { param: 'file' });
    return new TranscriptionCall(surface, upload, fields, file, await estimatedSeconds(upload, deps.maxBodyMb, file));
  });
}

/** `POST /v1/audio/transcriptions` (docs/api.md 2.13, multipart with `file`). */
export const transcriptionsRoute = (deps: RelayRouteDeps): DirectRoute => transcriptionRoute('/v1/audio/transcriptions', 'transcriptions', deps);

/** `POST /v1/audio/translations` (docs/api.md 2.13, multipart with `file`). */
export const translationsRoute = (deps: RelayRouteDeps): DirectRoute => transcriptionRoute('/v1/audio/translations', 'translations', deps);
