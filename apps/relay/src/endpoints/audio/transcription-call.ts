import type { TranscriptionFields } from '@modelgate/schemas/relay';
import type { MeteredUse, Metering } from '../../features/billing/pricing';
import type { RelayCall } from '../../features/relay/relay-call';
import { audioDuration } from '../../features/upload/audio-duration';
import type { MultipartUpload, UploadedFile } from '../../features/upload/multipart-upload';
import { jsonObjectIn, objectOf } from '../../core/json';
import type { SseEvent } from '../../core/provider';
import { type MediaAnswerReader, PassThroughMediaCall, type ReportedTokens, reportedMediaTokens, roundedUnits, UploadRequest } from '../media';

/** The answer formats that report neither tokens nor seconds: the file's own duration prices them. */
const PLAIN_FORMATS = new Set(['text', 'srt', 'vtt']);

/** Audio tokens a second of speech is reserved at, heard and written (the gpt-4o transcribe models). */
const RESERVED_INPUT_TOKENS_PER_SECOND = 10;
const RESERVED_OUTPUT_TOKENS_PER_SECOND = 4;

/** docs/api.md 2.14: a minute of audio, counted by the second. */
export function audioUse(seconds: number): MeteredUse {
  const whole = Math.ceil(seconds);
  return { units: roundedUnits(whole / 60), billed: { seconds: whole } };
}

function positiveSeconds(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Reads a transcription answer: tokens (gpt-4o transcribe models, in the answer or the final
 * `transcript.text.done` event) or the seconds heard (`usage.seconds`, verbose_json's `duration`);
 * when it tells neither, the file's own duration, read from the whole upload.
 */
class TranscriptionAnswerReader implements MediaAnswerReader {
  tokens: ReportedTokens | undefined;
  private seconds: number | undefined;

  constructor(private readonly fileSeconds: () => Promise<number | undefined>) {}

  json(answer: Record<string, unknown>): void {
    const usage = objectOf(answer.usage);
    if (usage.type === 'tokens') this.tokens = reportedMediaTokens(usage);
    this.seconds = positiveSeconds(usage.seconds) ?? positiveSeconds(answer.duration);
  }

  event(event: SseEvent): void {
    const data = event.data === null ? undefined : jsonObjectIn(event.data);
    if (data?.type === 'transcript.text.done') this.json(data);
  }

  async metered(): Promise<MeteredUse | undefined> {
    const seconds = this.seconds ?? (this.tokens === undefined ? await this.fileSeconds() : undefined);
    return seconds === undefined ? undefined : audioUse(seconds);
  }
}

/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations` (docs/api.md 2.13, multipart): the
 * upload streamed to OpenAI and Azure channels as it arrives, the answer (any `response_format`)
 * passed through. Priced by the tokens reported, else per minute of audio (docs/api.md 2.14).
 */
export class TranscriptionCall extends PassThroughMediaCall {
  readonly model: string;
  readonly stream: boolean;
  readonly estimate: RelayCall['estimate'];
  readonly metering: Metering;
  protected readonly client: UploadRequest;
  private fileDuration: Promise<number | undefined> | undefined;

  constructor(
    readonly surface: 'transcriptions' | 'translations',
    private readonly upload: MultipartUpload,
    fields: TranscriptionFields,
    private readonly file: UploadedFile,
    /** The file's duration as known before the call: its header's, else an estimate from its size. */
    estimatedSeconds: number,
  ) {
    super();
    this.model = fields.model;
    this.stream = fields.stream === true;
    this.estimate = {
      promptTokens: Math.ceil(estimatedSeconds * RESERVED_INPUT_TOKENS_PER_SECOND),
      completionTokens: Math.ceil(estimatedSeconds * RESERVED_OUTPUT_TOKENS_PER_SECOND),
    };
    this.metering = { unit: 'minute', tokenPriced: true, estimate: audioUse(estimatedSeconds) };
    this.client = new UploadRequest(upload, this.stream);
    // Read while the upstream transcribes, so that settlement does not wait for it.
    if (PLAIN_FORMATS.has(fields.response_format ?? 'json')) void this.fileSeconds();
  }

  protected answerReader(): TranscriptionAnswerReader {
    return new TranscriptionAnswerReader(() => this.fileSeconds());
  }

  /** The whole file's duration (music-metadata, frame by frame where the header is silent), once it is uploaded. */
  private fileSeconds(): Promise<number | undefined> {
    const { upload, file } = this;
    this.fileDuration ??= upload.complete.then(
      () => audioDuration(upload.fileReader(file), file.contentType, (file.end ?? file.start) - file.start),
      () => undefined,
    );
    return this.fileDuration;
  }
}
