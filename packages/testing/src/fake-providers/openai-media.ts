// Fake OpenAI media and other endpoints (served by the OpenAI fake, and the images and audio ones by
// the Azure fake too). Deterministic answers (integration tests assert on them):
// - POST /v1/images/generations (JSON) and /v1/images/edits (multipart: `image` / `image[]`, `mask`,
//   `prompt`, `model`, `n`, `size`, `quality`, `response_format`): `n` (default 1) images, each
//   `{b64_json: FAKE_PNG in base64}` or with `response_format: "url"` `{url}`; dall-e models add
//   `revised_prompt` (the prompt). gpt-image models report `usage`: input tokens one per prompt word
//   (text_tokens) plus `MEDIA_PART_TOKENS` per uploaded image (image_tokens), output tokens
//   `FAKE_IMAGE_OUTPUT_TOKENS[quality]` (default medium) per image; dall-e models report none.
// - POST /v1/audio/speech (JSON): `FAKE_SPEECH_MS_PER_CHARACTER` ms of a 24 kHz 16-bit mono sine per
//   input character, as raw PCM (a WAV header first for `wav`), sent in `chunks` pieces with the
//   content type of `response_format` (default mp3; the bytes are the same PCM whatever the format).
//   A binary stream has no error event: `errorMidStream` ends it early like `endMidStream`.
// - POST /v1/audio/transcriptions and /v1/audio/translations (multipart: `file`, `model`,
//   `response_format`, `language`): the text is `chunks` pieces of the text piece, trimmed; the
//   duration is the WAV header's when the file has one, else `FAKE_AUDIO_BYTES_PER_SECOND` bytes a
//   second. json `{text}`, text / srt / vtt as text/plain, verbose_json with task, language,
//   duration and one segment. Transcriptions report `usage` in json and verbose_json: gpt-* models
//   tokens (input `FAKE_AUDIO_TOKENS_PER_SECOND` a second, output one per piece), others the
//   seconds; translations report none.
// - POST /v1/moderations: one result per input text (string, string array, or text parts of a
//   multimodal array); flagged for `violence` (score 0.9) when the text contains `FAKE_FLAGGED_WORD`.
// - POST /v1/rerank (Jina / Cohere): a document's score is the share of the query's words it
//   contains (case-insensitive); results by score, ties in document order, cut to `top_n`;
//   documents echoed as `{text}` unless `return_documents` is false; `total_tokens` one per word.
import { fakePcmBase64 } from './gemini';
import { type PcmFormat, WAV_HEADER_BYTES, wavHeader } from '../wav';
import {
  type Answer,
  type AnswerContext,
  asArray,
  FAKE_FLAGGED_WORD,
  FAKE_PNG,
  isObject,
  type JsonObject,
  jsonAnswer,
  MEDIA_PART_TOKENS,
  nowSeconds,
  type Operation,
  type UploadedFile,
  wordsIn,
} from './shared';

/** Output tokens of one gpt-image image by `quality` (OpenAI's figures for 1024x1024). */
export const FAKE_IMAGE_OUTPUT_TOKENS: Readonly<Record<string, number>> = { low: 272, medium: 1056, high: 4160 };
export const FAKE_SPEECH_MS_PER_CHARACTER = 50;
/** How long an uploaded file without a WAV header lasts: this many bytes a second. */
export const FAKE_AUDIO_BYTES_PER_SECOND = 16_000;
export const FAKE_AUDIO_TOKENS_PER_SECOND = 10;
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

const SPEECH_CONTENT_TYPES: Readonly<Record<string, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
const SAMPLE_RATE = 24_000;
/** The fake's speech: 24 kHz 16-bit mono PCM. */
const SPEECH_PCM: PcmFormat = { sampleRate: SAMPLE_RATE, bitsPerSample: 16 };
const textAnswer = (body: string): Answer => ({ stream: false, status: 200, body, contentType: 'text/plain; charset=utf-8' });

/** A multipart number field or a JSON number, else the default. */
function count(value: unknown, fallback: number): number {
  const parsed = typeof value === 'string' ? Number(value) : value;
  return typeof parsed === 'number' && Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
}

function images(body: JsonObject, { sequence, withUsage, form }: AnswerContext): Answer {
  const model = String(body.model ?? 'dall-e-2');
  const prompt = String(body.prompt ?? '');
  const n = count(body.n, 1);
  const data = Array.from({ length: n }, (_, index) => {
    const image: JsonObject = body.response_format === 'url'
      ? { url: `https://images.fake.invalid/img-fake${sequence}-${index}.png` }
      : { b64_json: FAKE_PNG.toString('base64') };
    if (model.startsWith('dall-e')) image.revised_prompt = prompt;
    return image;
  });
  const whole: JsonObject = { created: nowSeconds(), data };
  if (withUsage && model.startsWith('gpt-image')) {
    const textTokens = wordsIn(prompt);
    const imageTokens = (form?.files ?? []).filter((file) => file.name.startsWith('image')).length * MEDIA_PART_TOKENS;
    const outputTokens = n * (FAKE_IMAGE_OUTPUT_TOKENS[String(body.quality)] ?? FAKE_IMAGE_OUTPUT_TOKENS.medium ?? 0);
    whole.usage = {
      input_tokens: textTokens + imageTokens,
      input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
      output_tokens: outputTokens,
      total_tokens: textTokens + imageTokens + outputTokens,
    };
  }
  return jsonAnswer(whole);
}

function speech(body: JsonObject, { settings }: AnswerContext): Answer {
  const format = typeof body.response_format === 'string' && body.response_format in SPEECH_CONTENT_TYPES ? body.response_format : 'mp3';
  const pcm = Buffer.from(fakePcmBase64(String(body.input ?? '').length * FAKE_SPEECH_MS_PER_CHARACTER), 'base64');
  const audio = format === 'wav' ? Buffer.concat([wavHeader(pcm.length, SPEECH_PCM), pcm]) : pcm;
  const pieces = Math.max(1, settings.chunks);
  const size = Math.ceil(audio.length / pieces);
  const events = Array.from({ length: pieces }, (_, i) => audio.subarray(i * size, (i + 1) * size));
  return { stream: true, events, cutAfter: Math.min(2, pieces), contentType: SPEECH_CONTENT_TYPES[format], errorEvent: new Uint8Array(0) };
}

/** Seconds of an upload: from its WAV header (byte rate and data size), else by its size. */
function audioSeconds(file: UploadedFile | undefined): number {
  if (!file) return 0;
  const { bytes } = file;
  const wav = bytes.length >= WAV_HEADER_BYTES && bytes.toString('ascii', 0, 4) === 'RIFF' && bytes.toString('ascii', 8, 12) === 'WAVE';
  if (wav && bytes.readUInt32LE(28) > 0) return (bytes.length - WAV_HEADER_BYTES) / bytes.readUInt32LE(28);
  return file.size / FAKE_AUDIO_BYTES_PER_SECOND;
}

/** `seconds` as SRT (`00:00:01,500`) or WebVTT (`00:00:01.500`) time. */
function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function audioText(task: 'transcribe' | 'translate'): Operation {
  return (body: JsonObject, { settings, withUsage, form }: AnswerContext): Answer => {
    const pieces = Math.max(0, settings.chunks);
    const text = settings.textPiece.repeat(pieces).trim();
    const duration = audioSeconds(form?.files.find((file) => file.name === 'file'));
    const model = String(body.model ?? 'whisper-1');
    const format = body.response_format;
    if (format === 'text') return textAnswer(`${text}\n`);
    if (format === 'srt') return textAnswer(`1\n${timestamp(0, ',')} --> ${timestamp(duration, ',')}\n${text}\n\n`);
    if (format === 'vtt') return textAnswer(`WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(duration, '.')}\n${text}\n\n`);
    const whole: JsonObject = format === 'verbose_json'
      ? {
        task,
        language: task === 'translate' ? 'english' : String(body.language ?? 'english'),
        duration,
        text,
        segments: [{ id: 0, seek: 0, start: 0, end: duration, text, tokens: [], temperature: 0, avg_logprob: -0.1, compression_ratio: 1, no_speech_prob: 0 }],
      }
      : { text };
    if (withUsage && task === 'transcribe') {
      const inputTokens = Math.ceil(duration * FAKE_AUDIO_TOKENS_PER_SECOND);
      whole.usage = model.startsWith('gpt-')
        ? { type: 'tokens', input_tokens: inputTokens, input_token_details: { text_tokens: 0, audio_tokens: inputTokens }, output_tokens: pieces, total_tokens: inputTokens + pieces }
        : { type: 'duration', seconds: Math.ceil(duration) };
    }
    return jsonAnswer(whole);
  };
}

/** The texts a moderation request asks about: a string, strings, or the text parts of a multimodal array. */
function moderationTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  return asArray(input).flatMap((item) => (typeof item === 'string' ? [item] : isObject(item) && typeof item.text === 'string' ? [item.text] : []));
}

function moderations(body: JsonObject, { sequence }: AnswerContext): Answer {
  const results = moderationTexts(body.input).map((text) => {
    const flagged = text.toLowerCase().includes(FAKE_FLAGGED_WORD);
    const categories = Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, flagged && category === 'violence']));
    const scores = Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, flagged && category === 'violence' ? 0.9 : 0.0001]));
    const appliedTypes = Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, ['text']]));
    return { flagged, categories, category_scores: scores, category_applied_input_types: appliedTypes };
  });
  return jsonAnswer({ id: `modr-fake${sequence}`, model: String(body.model ?? 'omni-moderation-latest'), results });
}

const lowerWords = (text: string): string[] => text.toLowerCase().split(/\W+/).filter(Boolean);

function rerank(body: JsonObject, { withUsage }: AnswerContext): Answer {
  const query = String(body.query ?? '');
  const queryWords = new Set(lowerWords(query));
  const documents = asArray(body.documents).map((document) => (isObject(document) ? String(document.text ?? '') : String(document)));
  const scored = documents.map((text, index) => {
    const words = new Set(lowerWords(text));
    const shared = [...queryWords].filter((word) => words.has(word)).length;
    return { index, relevance_score: queryWords.size ? shared / queryWords.size : 0, text };
  });
  // Array.prototype.sort is stable: equal scores keep the documents' order.
  scored.sort((a, b) => b.relevance_score - a.relevance_score);
  const results = scored.slice(0, count(body.top_n, scored.length)).map(({ index, relevance_score, text }) =>
    body.return_documents === false ? { index, relevance_score } : { index, relevance_score, document: { text } });
  const whole: JsonObject = { model: String(body.model), results };
  if (withUsage) whole.usage = { total_tokens: wordsIn(query) + documents.reduce((sum, text) => sum + wordsIn(text), 0) };
  return jsonAnswer(whole);
}

/** The media operations by the path after `/v1/` (Azure serves the images and audio ones). */
export const MEDIA_OPERATIONS: ReadonlyMap<string, Operation> = new Map([
  ['images/generations', images],
  ['images/edits', images],
  ['audio/speech', speech],
  ['audio/transcriptions', audioText('transcribe')],
  ['audio/translations', audioText('translate')],
  ['moderations', moderations],
  ['rerank', rerank],
]);
