// The fake model providers of the tests and of `pnpm bench`: one local server speaking OpenAI,
// Anthropic and Gemini (see fake-providers/ for each one's routes and deterministic answers).
export { type FakeUpstream, startFakeUpstream } from './fake-providers/server';
export { fakePcmBase64 } from './fake-providers/gemini';
export {
  DEFAULT_EMBEDDING_DIMENSIONS,
  type Dialect,
  FAKE_MODES,
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
  type RecordedRequest,
} from './fake-providers/shared';
