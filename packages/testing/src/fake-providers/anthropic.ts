// Fake Anthropic: POST /v1/messages and /v1/messages/count_tokens (query strings ignored). Requires
// a key in `x-api-key` or `Authorization: Bearer` (the official SDK 1.x sends the latter; neither:
// 401 authentication_error) and `anthropic-version` (else 400 invalid_request_error); a message
// without `max_tokens` is 400 "max_tokens: Field required".
// Deterministic answers (integration tests assert on them):
// - Text: `chunks` pieces of " hello" (default 5) in one text block, capped by `max_tokens`;
//   stop_reason `max_tokens` when capped, else `end_turn`.
// - input_tokens: one per word of every text (system included, tool_use inputs and tool_result
//   contents as their text/JSON), 258 per image / document block; thinking blocks are not counted.
//   `cache_read_input_tokens` = `cachedTokens` and `cache_creation_input_tokens` = `cacheWriteTokens`
//   (options, default 0), NOT included in input_tokens, as Anthropic reports them.
// - Tool call: when `tools` are offered, `tool_choice.type` is not `none` and the last message is
//   not a user message holding a `tool_result` block: one `tool_use` block `toolu_fake<n>` of the
//   forced (`tool_choice: {type: "tool", name}`) or else the first tool, input {"city":"Paris"},
//   stop_reason `tool_use`, 10 output tokens; streamed as two `input_json_delta` pieces.
// - Thinking: `thinking.type === "enabled"` -> a first `thinking` block "Let me think." with
//   signature `sig-fake-<n>` (streamed as thinking_delta + signature_delta), 3 more output tokens.
// - Streams: message_start (usage with output_tokens 1), ping, per block content_block_start /
//   content_block_delta... / content_block_stop, message_delta (stop_reason, usage.output_tokens),
//   message_stop; `event:` lines as Anthropic sends them.
// - count_tokens: `{input_tokens}` counted as above.
import type { IncomingHttpHeaders } from 'node:http';
import {
  type Answer,
  type AnswerContext,
  asArray,
  bearerToken,
  type ErrorReply,
  FAKE_THOUGHT,
  FAKE_THOUGHT_TOKENS,
  FAKE_TOOL_ARGUMENT_PIECES,
  FAKE_TOOL_ARGUMENTS,
  FAKE_TOOL_CALL_TOKENS,
  type FakeProvider,
  type FaultReplies,
  isObject,
  type JsonObject,
  jsonAnswer,
  MEDIA_PART_TOKENS,
  textPieces,
  toolToCall,
  wordsIn,
  wordsInJson,
} from './shared';

const error = (type: string, message: string) => ({ type: 'error', error: { type, message } });
export const reply = (status: number, type: string, message: string): ErrorReply => ({ status, body: error(type, message) });

const FAULTS: FaultReplies = {
  error400: (key) => reply(400, 'invalid_request_error', `temperature: Input should be less than or equal to 1 (request with key ${key} to https://upstream.internal/v1/messages)`),
  error401: () => reply(401, 'authentication_error', 'invalid x-api-key'),
  error403: () => reply(403, 'permission_error', 'Your API key does not have permission to use the specified resource.'),
  error429: () => reply(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit; see the response headers for current usage.'),
  quotaExhausted: () => reply(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'),
  error500: () => reply(500, 'api_error', 'Internal server error'),
  overloaded: () => reply(529, 'overloaded_error', 'Overloaded'),
};

const event = (type: string, payload: unknown): string => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;

function blockTokens(content: unknown): number {
  if (typeof content === 'string') return wordsIn(content);
  let total = 0;
  for (const block of asArray(content)) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') total += wordsIn(block.text);
    else if (block.type === 'image' || block.type === 'document') total += MEDIA_PART_TOKENS;
    else if (block.type === 'tool_use') total += wordsInJson(block.input);
    else if (block.type === 'tool_result') total += blockTokens(block.content);
  }
  return total;
}

function inputTokens(body: JsonObject): number {
  let total = blockTokens(body.system);
  for (const message of asArray(body.messages)) if (isObject(message)) total += blockTokens(message.content);
  return total;
}

/** The tool a request gets called, if any (see the rules at the top). */
function toolUse(body: JsonObject): string | undefined {
  // Typed tools (web search ...) run at Anthropic: the answer reports them in its usage instead.
  const offered = asArray(body.tools).flatMap((tool) =>
    isObject(tool) && typeof tool.name === 'string' && (tool.type === undefined || tool.type === null || tool.type === 'custom') ? [tool.name] : []);
  const choice = isObject(body.tool_choice) ? body.tool_choice : {};
  const forced = choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
  const last = asArray(body.messages).at(-1);
  const endsWithToolResult = isObject(last) && last.role === 'user'
    && asArray(last.content).some((block) => isObject(block) && block.type === 'tool_result');
  return toolToCall(offered, forced, choice.type === 'none', endsWithToolResult);
}

export function messages(body: JsonObject, { settings, sequence, withUsage }: AnswerContext): Answer {
  if (typeof body.max_tokens !== 'number') {
    return jsonAnswer(error('invalid_request_error', 'max_tokens: Field required'), 'application/json', 400);
  }
  const id = `msg_fake${sequence}`;
  const model = String(body.model);
  const thinking = isObject(body.thinking) && body.thinking.type === 'enabled';
  const tool = toolUse(body);
  const { pieces, capped } = textPieces(settings, body.max_tokens);
  const outputTokens = (thinking ? FAKE_THOUGHT_TOKENS : 0) + (tool ? FAKE_TOOL_CALL_TOKENS : pieces);
  const stopReason = tool ? 'tool_use' : capped ? 'max_tokens' : 'end_turn';
  const signature = `sig-fake-${sequence}`;
  const toolId = `toolu_fake${sequence}`;
  const searches = asArray(body.tools).some((tool) => isObject(tool) && typeof tool.type === 'string' && tool.type.startsWith('web_search_'));
  const serverToolUse = searches ? { server_tool_use: { web_search_requests: settings.serverToolCalls, web_fetch_requests: 0 } } : {};
  const usage = (output: number) => ({
    input_tokens: inputTokens(body),
    cache_creation_input_tokens: settings.cacheWriteTokens,
    cache_read_input_tokens: settings.cachedTokens,
    cache_creation: { ephemeral_5m_input_tokens: settings.cacheWriteTokens, ephemeral_1h_input_tokens: 0 },
    output_tokens: output,
    ...serverToolUse,
    service_tier: 'standard',
  });
  const message = (content: JsonObject[], stop: string | null, output: number): JsonObject => ({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    ...(withUsage ? { usage: usage(output) } : {}),
  });

  if (body.stream !== true) {
    const content: JsonObject[] = [];
    if (thinking) content.push({ type: 'thinking', thinking: FAKE_THOUGHT, signature });
    content.push(tool
      ? { type: 'tool_use', id: toolId, name: tool, input: FAKE_TOOL_ARGUMENTS }
      : { type: 'text', text: settings.textPiece.repeat(pieces) });
    return jsonAnswer(message(content, stopReason, outputTokens));
  }

  const events = [event('message_start', { type: 'message_start', message: message([], null, 1) }), event('ping', { type: 'ping' })];
  let index = 0;
  const block = (start: JsonObject, deltas: JsonObject[]) => {
    events.push(event('content_block_start', { type: 'content_block_start', index, content_block: start }));
    for (const delta of deltas) events.push(event('content_block_delta', { type: 'content_block_delta', index, delta }));
    events.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index += 1;
  };
  if (thinking) {
    block({ type: 'thinking', thinking: '', signature: '' }, [
      { type: 'thinking_delta', thinking: FAKE_THOUGHT },
      { type: 'signature_delta', signature },
    ]);
  }
  // Events before the answer's own block: its start event comes next, then its deltas.
  const before = events.length + 1;
  let cutAfter: number;
  if (tool) {
    block({ type: 'tool_use', id: toolId, name: tool, input: {} },
      FAKE_TOOL_ARGUMENT_PIECES.map((partial_json) => ({ type: 'input_json_delta', partial_json })));
    cutAfter = before + 1;
  } else {
    block({ type: 'text', text: '' }, Array.from({ length: pieces }, () => ({ type: 'text_delta', text: settings.textPiece })));
    cutAfter = before + Math.min(2, pieces);
  }
  events.push(event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    ...(withUsage ? { usage: { output_tokens: outputTokens, ...serverToolUse } } : {}),
  }));
  events.push(event('message_stop', { type: 'message_stop' }));
  return { stream: true, events, cutAfter };
}

/** The key of `x-api-key`, or of `Authorization: Bearer` (what @anthropic-ai/sdk 1.x sends). */
const apiKey = (headers: IncomingHttpHeaders): string =>
  String(headers['x-api-key'] ?? bearerToken(headers));

export const countTokens = (body: JsonObject): Answer => jsonAnswer({ input_tokens: inputTokens(body) });

export const anthropicProvider: FakeProvider = {
  dialect: 'anthropic',
  operation(path) {
    if (path.endsWith('/v1/messages')) return messages;
    if (path.endsWith('/v1/messages/count_tokens')) return countTokens;
    return undefined;
  },
  apiKey,
  checkRequest({ headers }) {
    if (!apiKey(headers)) return reply(401, 'authentication_error', 'x-api-key header is required');
    if (!headers['anthropic-version']) return reply(400, 'invalid_request_error', 'anthropic-version: header is required');
    return undefined;
  },
  invalidJson: reply(400, 'invalid_request_error', 'There was an error parsing the body of your request as JSON.'),
  faults: FAULTS,
  malformedEvent: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "unterminated\n\n',
  errorEvent: event('error', error('overloaded_error', 'Overloaded')),
};
