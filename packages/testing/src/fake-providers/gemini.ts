// Fake Gemini: POST .../models/{model}:generateContent, :streamGenerateContent (always SSE, events
// separated by \r\n\r\n as Google does), :embedContent, :batchEmbedContents and :countTokens; key in
// `x-goog-api-key` or `?key=`. Deterministic answers (integration tests assert on them):
// - Text: `chunks` pieces of " hello" (default 5), capped by `generationConfig.maxOutputTokens`;
//   finishReason `MAX_TOKENS` when capped, else `STOP`. Streams: one chunk per piece, the last with
//   finishReason and usageMetadata.
// - promptTokenCount: one per word of every text part (systemInstruction included), functionCall /
//   functionResponse parts the words of their JSON, 258 per other part (inlineData, fileData...);
//   plus `cachedTokens` + `cacheWriteTokens`, with `cachedContentTokenCount` = `cachedTokens`
//   (included in promptTokenCount, as Gemini reports it).
// - Function call: when `tools[].functionDeclarations` are offered, `toolConfig.functionCallingConfig.mode`
//   is not NONE and the last content holds no `functionResponse` part: one `functionCall` part (no id)
//   of the forced (`allowedFunctionNames[0]`) or else the first function, args {"city":"Paris"},
//   finishReason STOP, candidatesTokenCount 10; streamed whole in one chunk, as Gemini does.
// - Thoughts: `generationConfig.thinkingConfig.includeThoughts` -> a first part
//   `{text: "Let me think.", thought: true}` (its own chunk when streaming) and `thoughtsTokenCount` 3
//   (not in candidatesTokenCount, in totalTokenCount).
// - Text-to-speech (`responseModalities` containing AUDIO): `fakePcmBase64(audioMs)` as
//   `audio/L16;codec=pcm;rate=24000`, 25 audio tokens per second.
// - Image models (a model named `*-image*`, `responseModalities` containing IMAGE): one text piece,
//   then `{inlineData: {mimeType: "image/png", data: FAKE_PNG}}`; candidatesTokenCount one for the
//   text plus `FAKE_GEMINI_IMAGE_TOKENS` for the image. A prompt containing `FAKE_FLAGGED_WORD`
//   gets no image: a candidate without content, finishReason IMAGE_SAFETY, no candidate tokens. As
//   Gemini does, 400 INVALID_ARGUMENT for `candidateCount` above 1 or an `imageConfig.aspectRatio`
//   it does not draw. Streams: the whole answer in one chunk.
// - Embeddings: `fakeEmbedding(text of the parts, outputDimensionality ?? 8)` per content; no usage
//   (the Gemini API reports none for embeddings). countTokens: `{totalTokens}` counted as above.
import type { IncomingHttpHeaders } from 'node:http';
import {
  type Answer,
  asArray,
  embeddingDimensions,
  errorAnswer,
  type ErrorReply,
  FAKE_FLAGGED_WORD,
  FAKE_PNG,
  FAKE_THOUGHT,
  FAKE_THOUGHT_TOKENS,
  FAKE_TOOL_ARGUMENTS,
  FAKE_TOOL_CALL_TOKENS,
  fakeEmbedding,
  type FakeProvider,
  type FaultReplies,
  isObject,
  type JsonObject,
  jsonAnswer,
  MEDIA_PART_TOKENS,
  type Operation,
  textPieces,
  toolToCall,
  wordsIn,
  wordsInJson,
} from './shared';

const SEPARATOR = '\r\n\r\n';
const CONTENT_TYPE = 'application/json; charset=UTF-8';
const AUDIO_TOKENS_PER_SECOND = 25;
const SAMPLE_RATE = 24_000;
const SAFETY_RATINGS = [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }];
const ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
/** Output tokens of one image of a Gemini image model (Gemini's figure at 1024x1024, the same at every aspect ratio). */
export const FAKE_GEMINI_IMAGE_TOKENS = 1290;

const error = (code: number, message: string, status: string) => ({ error: { code, message, status } });
export const reply = (code: number, message: string, status: string): ErrorReply => ({ status: code, body: error(code, message, status) });

const FAULTS: FaultReplies = {
  error400: (key) => reply(400, `Invalid JSON payload received with key ${key} at https://upstream.internal/v1beta`, 'INVALID_ARGUMENT'),
  error401: () => reply(401, 'API key not valid. Please pass a valid API key.', 'UNAUTHENTICATED'),
  error403: () => reply(403, 'Permission denied: consumer has been suspended.', 'PERMISSION_DENIED'),
  error429: () => reply(429, 'Resource has been exhausted (e.g. check quota).', 'RESOURCE_EXHAUSTED'),
  quotaExhausted: () => reply(429, 'You exceeded your current quota, please check your plan and billing details.', 'RESOURCE_EXHAUSTED'),
  error500: () => reply(500, 'Internal error encountered.', 'INTERNAL'),
  overloaded: () => reply(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE'),
};

const pcmCache = new Map<number, string>();
/** Deterministic 16-bit mono PCM at 24 kHz (a 440 Hz tone), base64, as Gemini TTS returns it. */
export function fakePcmBase64(durationMs: number): string {
  let cached = pcmCache.get(durationMs);
  if (!cached) {
    const samples = Math.round((SAMPLE_RATE * durationMs) / 1000);
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), i * 2);
    cached = pcm.toString('base64');
    pcmCache.set(durationMs, cached);
  }
  return cached;
}

const partsOf = (content: unknown): unknown[] => (isObject(content) ? asArray(content.parts) : []);

function partTokens(part: unknown): number {
  if (!isObject(part)) return 0;
  if (typeof part.text === 'string') return wordsIn(part.text);
  if (isObject(part.functionCall)) return wordsInJson(part.functionCall.args);
  if (isObject(part.functionResponse)) return wordsInJson(part.functionResponse.response);
  return MEDIA_PART_TOKENS;
}

function promptTokens(body: JsonObject): number {
  let total = 0;
  for (const part of partsOf(body.systemInstruction)) total += partTokens(part);
  for (const content of asArray(body.contents)) for (const part of partsOf(content)) total += partTokens(part);
  return total;
}

/** The function a request gets called, if any (see the rules at the top). */
function functionToCall(body: JsonObject): string | undefined {
  const offered = asArray(body.tools).flatMap((tool) => (isObject(tool) ? asArray(tool.functionDeclarations) : []))
    .flatMap((declaration) => (isObject(declaration) && typeof declaration.name === 'string' ? [declaration.name] : []));
  const config = isObject(body.toolConfig) && isObject(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
  const [allowed] = asArray(config.allowedFunctionNames);
  const forced = config.mode === 'ANY' && typeof allowed === 'string' ? allowed : undefined;
  const endsWithFunctionResponse = partsOf(asArray(body.contents).at(-1)).some((part) => isObject(part) && isObject(part.functionResponse));
  return toolToCall(offered, forced, config.mode === 'NONE', endsWithFunctionResponse);
}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}${SEPARATOR}`;

/** Gemini's refusal of a generation config an image model cannot follow, if any. */
function imageConfigRefusal(model: string, config: JsonObject): ErrorReply | undefined {
  if (typeof config.candidateCount === 'number' && config.candidateCount > 1) {
    return reply(400, `Multiple candidates is not enabled for models/${model}`, 'INVALID_ARGUMENT');
  }
  const aspectRatio = isObject(config.imageConfig) ? config.imageConfig.aspectRatio : undefined;
  if (aspectRatio !== undefined && !ASPECT_RATIOS.includes(String(aspectRatio))) {
    return reply(400, `Unsupported aspect ratio: ${String(aspectRatio)}. Supported aspect ratios are ${ASPECT_RATIOS.join(', ')}.`, 'INVALID_ARGUMENT');
  }
  return undefined;
}

function generate(model: string, stream: boolean): Operation {
  return (body, { settings, sequence, withUsage }) => {
    const config = isObject(body.generationConfig) ? body.generationConfig : {};
    const prompt = promptTokens(body) + settings.cachedTokens + settings.cacheWriteTokens;
    const responseId = `fake-${sequence}`;
    /** `generated`: the candidate tokens of each output modality (TEXT, AUDIO, IMAGE). */
    const usageMetadata = (generated: Readonly<Record<string, number>>, thoughts = 0): JsonObject => {
      const details = Object.entries(generated).map(([modality, tokenCount]) => ({ modality, tokenCount }));
      const candidates = details.reduce((sum, detail) => sum + detail.tokenCount, 0);
      return {
        promptTokenCount: prompt,
        candidatesTokenCount: candidates,
        totalTokenCount: prompt + candidates + thoughts,
        ...(settings.cachedTokens > 0 ? { cachedContentTokenCount: settings.cachedTokens } : {}),
        ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
        ...(settings.cachedTokens > 0 ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: settings.cachedTokens }] } : {}),
        candidatesTokensDetails: details,
      };
    };
    // Grounding with Google Search: the finished candidate tells what was searched and found.
    const grounded = asArray(body.tools).some((tool) => isObject(tool) && (isObject(tool.googleSearch) || isObject(tool.google_search)));
    const groundingMetadata = {
      webSearchQueries: Array.from({ length: settings.serverToolCalls }, (_, i) => `fake query ${i + 1}`),
      searchEntryPoint: { renderedContent: '<div>fake search</div>' },
      groundingChunks: [{ web: { uri: 'https://example.com/fake', title: 'example.com' } }],
    };
    const response = (parts: JsonObject[] | undefined, finishReason?: string, usage?: JsonObject): JsonObject => ({
      candidates: [{
        ...(parts ? { content: { parts, role: 'model' } } : {}),
        index: 0,
        ...(finishReason ? { finishReason, safetyRatings: SAFETY_RATINGS } : {}),
        ...(finishReason && grounded ? { groundingMetadata } : {}),
      }],
      ...(usage && withUsage ? { usageMetadata: usage } : {}),
      modelVersion: model,
      responseId,
    });

    // Generated media comes whole, streamed in one chunk.
    const inOnePiece = (whole: JsonObject): Answer => (stream ? { stream: true, events: [data(whole)], cutAfter: 2 } : jsonAnswer(whole, CONTENT_TYPE));
    const modalities = asArray(config.responseModalities);

    if (modalities.includes('AUDIO')) {
      const tokens = Math.ceil((settings.audioMs / 1000) * AUDIO_TOKENS_PER_SECOND);
      const audio = { inlineData: { mimeType: `audio/L16;codec=pcm;rate=${SAMPLE_RATE}`, data: fakePcmBase64(settings.audioMs) } };
      return inOnePiece(response([audio], 'STOP', usageMetadata({ AUDIO: tokens })));
    }

    if (model.includes('-image') && modalities.includes('IMAGE')) {
      const refusal = imageConfigRefusal(model, config);
      if (refusal) return errorAnswer(refusal);
      if (promptText(body).toLowerCase().includes(FAKE_FLAGGED_WORD)) return inOnePiece(response(undefined, 'IMAGE_SAFETY', usageMetadata({})));
      const image = { inlineData: { mimeType: 'image/png', data: FAKE_PNG.toString('base64') } };
      return inOnePiece(response([{ text: settings.textPiece }, image], 'STOP', usageMetadata({ TEXT: 1, IMAGE: FAKE_GEMINI_IMAGE_TOKENS })));
    }

    const thoughts = isObject(config.thinkingConfig) && config.thinkingConfig.includeThoughts === true;
    const thoughtTokens = thoughts ? FAKE_THOUGHT_TOKENS : 0;
    const thoughtPart = { text: FAKE_THOUGHT, thought: true };
    const call = functionToCall(body);
    if (call) {
      const callPart = { functionCall: { name: call, args: FAKE_TOOL_ARGUMENTS } };
      const usage = usageMetadata({ TEXT: FAKE_TOOL_CALL_TOKENS }, thoughtTokens);
      if (!stream) return jsonAnswer(response(thoughts ? [thoughtPart, callPart] : [callPart], 'STOP', usage), CONTENT_TYPE);
      const events = thoughts ? [data(response([thoughtPart]))] : [];
      return { stream: true, events: [...events, data(response([callPart], 'STOP', usage))], cutAfter: events.length };
    }

    const { pieces, capped } = textPieces(settings, config.maxOutputTokens);
    const finishReason = capped ? 'MAX_TOKENS' : 'STOP';
    const usage = usageMetadata({ TEXT: pieces }, thoughtTokens);
    if (!stream) {
      const text = { text: settings.textPiece.repeat(pieces) };
      return jsonAnswer(response(thoughts ? [thoughtPart, text] : [text], finishReason, usage), CONTENT_TYPE);
    }
    const events = thoughts ? [data(response([thoughtPart]))] : [];
    const cutAfter = events.length + Math.min(2, pieces);
    for (let i = 0; i < pieces; i++) {
      events.push(data(i === pieces - 1 ? response([{ text: settings.textPiece }], finishReason, usage) : response([{ text: settings.textPiece }])));
    }
    if (pieces === 0) events.push(data(response([{ text: '' }], finishReason, usage)));
    return { stream: true, events, cutAfter };
  };
}

const textOf = (content: unknown): string =>
  partsOf(content).map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join(' ');

const promptText = (body: JsonObject): string => asArray(body.contents).map(textOf).join(' ');

const embeddingOf = (request: JsonObject) => ({ values: fakeEmbedding(textOf(request.content), embeddingDimensions(request.outputDimensionality)) });

const embedContent: Operation = (body) => jsonAnswer({ embedding: embeddingOf(body) }, CONTENT_TYPE);

const batchEmbedContents: Operation = (body) =>
  jsonAnswer({ embeddings: asArray(body.requests).map((request) => embeddingOf(isObject(request) ? request : {})) }, CONTENT_TYPE);

const countTokens: Operation = (body) => {
  const tokens = promptTokens(isObject(body.generateContentRequest) ? body.generateContentRequest : body);
  return jsonAnswer({ totalTokens: tokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: tokens }] }, CONTENT_TYPE);
};

export const geminiProvider: FakeProvider = {
  dialect: 'gemini',
  operation(path) {
    const colon = path.lastIndexOf(':');
    if (colon === -1) return undefined;
    const action = path.slice(colon + 1);
    if (action === 'generateContent' || action === 'streamGenerateContent') {
      const model = decodeURIComponent(path.slice(path.lastIndexOf('/', colon) + 1, colon));
      return generate(model, action === 'streamGenerateContent');
    }
    if (action === 'embedContent') return embedContent;
    if (action === 'batchEmbedContents') return batchEmbedContents;
    if (action === 'countTokens') return countTokens;
    return undefined;
  },
  apiKey(headers: IncomingHttpHeaders, url: string) {
    const header = headers['x-goog-api-key'];
    if (header) return String(header);
    const query = url.indexOf('?');
    return query === -1 ? '' : new URLSearchParams(url.slice(query + 1)).get('key') ?? '';
  },
  invalidJson: reply(400, 'Invalid JSON payload received.', 'INVALID_ARGUMENT'),
  faults: FAULTS,
  malformedEvent: `data: {"candidates": [{"content": {"parts": [{"text": "unterminated${SEPARATOR}`,
  errorEvent: data(error(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE')),
};
