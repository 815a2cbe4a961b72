// The fake model providers of the tests and of `pnpm bench`: one local server speaking OpenAI,
// Anthropic, Gemini, Azure OpenAI, AWS Bedrock and Google Vertex AI (see fake-providers/ for each
// one's routes and deterministic answers).
export { type FakeUpstream, startFakeUpstream } from './fake-providers/server';
export { FAKE_GEMINI_IMAGE_TOKENS, fakePcmBase64 } from './fake-providers/gemini';
export {
  FAKE_AUDIO_BYTES_PER_SECOND,
  FAKE_AUDIO_TOKENS_PER_SECOND,
  FAKE_IMAGE_OUTPUT_TOKENS,
  FAKE_SPEECH_MS_PER_CHARACTER,
  MODERATION_CATEGORIES,
} from './fake-providers/openai-media';
export {
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  FAKE_AWS_SESSION_ACCESS_KEY_ID,
  FAKE_AWS_SESSION_TOKEN,
  FAKE_BEDROCK_API_KEY,
} from './fake-providers/bedrock';
export { FAKE_VERTEX_PROJECT, fakeVertexServiceAccount, VERTEX_TOKEN_PATH } from './fake-providers/vertex';
export {
  type CloudRequest,
  DEFAULT_EMBEDDING_DIMENSIONS,
  type Dialect,
  FAKE_FLAGGED_WORD,
  FAKE_MODES,
  FAKE_PNG,
  FAKE_TEXT_PIECE,
  FAKE_THOUGHT,
  FAKE_THOUGHT_TOKENS,
  FAKE_TOOL_ARGUMENT_PIECES,
  FAKE_TOOL_ARGUMENTS,
  FAKE_TOOL_CALL_TOKENS,
  fakeEmbedding,
  type FakeMode,
  type FakeUpstreamOptions,
  MEDIA_PART_TOKENS,
  type RecordedFile,
  type RecordedForm,
  type RecordedRequest,
} from './fake-providers/shared';
export { type PcmFormat, pcmBytesPerSecond, silentWav, WAV_HEADER_BYTES, wavHeader } from './wav';
