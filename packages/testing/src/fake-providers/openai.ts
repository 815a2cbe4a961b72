// Fake OpenAI: POST /v1/completions, /v1/chat/completions, /v1/responses and /v1/embeddings (and the
// media endpoints of openai-media.ts), key in `Authorization: Bearer`. Deterministic answers (integration tests assert on them):
// - Text: `chunks` pieces of " hello" (default 5), capped by `max_tokens` / `max_completion_tokens`;
//   chat finish_reason `length` when capped, else `stop` (completions: always `stop`, as before).
// - Prompt tokens: one per word of every text (system and developer messages, tool results and the
//   arguments of earlier tool calls included), 258 per image_url / input_audio / file part; a token-id
//   array counts its ids. Chat adds `cachedTokens` + `cacheWriteTokens`, and reports `cachedTokens`
//   as `prompt_tokens_details.cached_tokens` (included in prompt_tokens, as OpenAI does).
// - Tool call (chat): when `tools` are offered, `tool_choice` is not `none` and the last message is
//   not `role: tool`: one call `call_fake<n>` of the forced or else the first tool with arguments
//   {"city":"Paris"}, finish_reason `tool_calls`, 10 completion tokens; streamed as a header delta
//   and two argument deltas. After a tool result: a text answer.
// - Reasoning (chat): `reasoning_effort` set (and not `none`) -> `reasoning_content: "Let me think."`
//   (DeepSeek-style, as many OpenAI-compatible servers answer), 3 more completion tokens, reported
//   as `completion_tokens_details.reasoning_tokens`.
// - Streams: a role chunk, a reasoning chunk, content/tool chunks, a finish chunk, then with
//   `stream_options.include_usage` a `choices: []` usage chunk (other chunks carry `usage: null`),
//   then `data: [DONE]`.
// - Responses (`/v1/responses`), the same rules in its own shapes: text capped by `max_output_tokens`
//   (status `incomplete`, incomplete_details.reason `max_output_tokens`); input tokens one per word of
//   `instructions` and of every input item's text (function_call arguments and function_call_output
//   included), 258 per input_image / input_file part, plus `cachedTokens` + `cacheWriteTokens`, reported
//   as input_tokens_details.cached_tokens / cache_write_tokens; a `function_call` item (`fc_fake<n>`,
//   call_id `call_fake<n>`) when function tools are offered, `tool_choice` is not `none` and the last
//   input item is not a `function_call_output`; a `reasoning` item (summary "Let me think.", 3 output
//   tokens, output_tokens_details.reasoning_tokens) first when `reasoning.effort` is set (not `none`).
//   The response (`resp_fake<n>`) echoes the request's parameters, `previous_response_id` included.
//   Streams: `event:` lines and `sequence_number`s as OpenAI sends them: response.created,
//   response.in_progress, per item output_item.added, (reasoning_summary_part.added,
//   reasoning_summary_text.delta/done, reasoning_summary_part.done | content_part.added,
//   output_text.delta..., output_text.done, content_part.done | function_call_arguments.delta x2,
//   function_call_arguments.done), output_item.done, then response.completed (or response.incomplete)
//   with usage. `errorMidStream`: an `error` event, then `response.failed`.
// - Embeddings: `fakeEmbedding(text, dimensions ?? 8)` per input (token arrays: ids joined by
//   spaces); `encoding_format: "base64"` sends the float32 little-endian bytes in base64.
import {
  type Answer,
  type AnswerContext,
  asArray,
  bearerToken,
  embeddingDimensions,
  FAKE_THOUGHT,
  FAKE_THOUGHT_TOKENS,
  FAKE_TOOL_ARGUMENT_PIECES,
  FAKE_TOOL_CALL_TOKENS,
  fakeEmbedding,
  type FakeProvider,
  type FaultReplies,
  isObject,
  type JsonObject,
  jsonAnswer,
  MEDIA_PART_TOKENS,
  namedEvent,
  nowSeconds,
  textPieces,
  toolToCall,
  wordsIn,
} from './shared';
import { MEDIA_OPERATIONS } from './openai-media';

const SEPARATOR = '\n\n';
const DONE = `data: [DONE]${SEPARATOR}`;
const SYSTEM_FINGERPRINT = 'fp_fake';
const TOOL_ARGUMENTS = FAKE_TOOL_ARGUMENT_PIECES.join('');

const error = (message: string, type: string, code: string | null, param: string | null = null) => ({
  error: { message, type, param, code },
});

const FAULTS: FaultReplies = {
  error400: (key) => ({
    status: 400,
    body: error(`Invalid value for 'temperature' (request with key ${key} to https://upstream.internal/v1/completions)`, 'invalid_request_error', 'invalid_value', 'temperature'),
  }),
  error401: (key) => ({
    status: 401,
    body: error(`Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', 'invalid_api_key'),
  }),
  error403: () => ({
    status: 403,
    body: error('Your organization is not allowed to use this model.', 'invalid_request_error', 'unsupported_country_region_territory'),
  }),
  error429: () => ({ status: 429, body: error('Rate limit reached for requests', 'requests', 'rate_limit_exceeded') }),
  quotaExhausted: () => ({
    status: 429,
    body: error('You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota', 'insufficient_quota'),
  }),
  error500: () => ({ status: 500, body: error('The server had an error while processing your request.', 'server_error', null) }),
  overloaded: () => ({ status: 503, body: error('The server is overloaded or not ready yet.', 'server_error', null) }),
};

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}${SEPARATOR}`;

/** Prompt tokens of `/v1/completions` and embeddings inputs: token-id arrays exactly, text one token per word. */
function promptTokens(prompt: unknown): number {
  if (typeof prompt === 'string') return wordsIn(prompt);
  let total = 0;
  for (const item of asArray(prompt)) {
    if (typeof item === 'number') total += 1;
    else if (typeof item === 'string') total += wordsIn(item);
    else if (Array.isArray(item)) total += item.length;
  }
  return total;
}

/** Chat parts, then Responses parts, that count as media. */
const MEDIA_PARTS: ReadonlySet<string> = new Set(['image_url', 'input_audio', 'file', 'input_image', 'input_file']);

/** Words of a text or of the text parts of a content array (chat and Responses parts alike), media by the part. */
function contentTokens(content: unknown): number {
  if (typeof content === 'string') return wordsIn(content);
  let total = 0;
  for (const part of asArray(content)) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string') total += wordsIn(part.text);
    else if (MEDIA_PARTS.has(String(part.type))) total += MEDIA_PART_TOKENS;
  }
  return total;
}

function chatPromptTokens(messages: unknown[]): number {
  let total = 0;
  for (const message of messages) {
    if (!isObject(message)) continue;
    total += contentTokens(message.content);
    for (const call of asArray(message.tool_calls)) {
      const args = isObject(call) && isObject(call.function) ? call.function.arguments : undefined;
      if (typeof args === 'string') total += wordsIn(args);
    }
  }
  return total;
}

/** The tool a chat request gets called, if any (see the rules at the top). */
function chatToolCall(body: JsonObject, messages: unknown[]): string | undefined {
  const offered = asArray(body.tools).flatMap((tool) =>
    isObject(tool) && isObject(tool.function) && typeof tool.function.name === 'string' ? [tool.function.name] : []);
  const choice = body.tool_choice;
  const forced = isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string' ? choice.function.name : undefined;
  const last = messages.at(-1);
  return toolToCall(offered, forced, choice === 'none', isObject(last) && last.role === 'tool');
}

function completion(body: JsonObject, { settings, sequence, withUsage }: AnswerContext): Answer {
  const id = `cmpl-fake${sequence}`;
  const created = nowSeconds();
  const model = String(body.model);
  const { pieces } = textPieces(settings, body.max_tokens);
  const prompt = promptTokens(body.prompt);
  const usage = { prompt_tokens: prompt, completion_tokens: pieces, total_tokens: prompt + pieces };
  if (body.stream !== true) {
    const whole: JsonObject = {
      id,
      object: 'text_completion',
      created,
      model,
      choices: [{ text: settings.textPiece.repeat(pieces), index: 0, logprobs: null, finish_reason: 'stop' }],
    };
    if (withUsage) whole.usage = usage;
    return jsonAnswer(whole);
  }
  const events: string[] = [];
  for (let i = 0; i < pieces; i++) {
    events.push(data({
      id,
      object: 'text_completion',
      created,
      model,
      choices: [{ text: settings.textPiece, index: 0, logprobs: null, finish_reason: i === pieces - 1 ? 'stop' : null }],
    }));
  }
  const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
  if (withUsage && includeUsage) events.push(data({ id, object: 'text_completion', created, model, choices: [], usage }));
  return { stream: true, events, end: DONE, cutAfter: 2 };
}

function chatCompletion(body: JsonObject, { settings, sequence, withUsage }: AnswerContext): Answer {
  const id = `chatcmpl-fake${sequence}`;
  const created = nowSeconds();
  const model = String(body.model);
  const messages = asArray(body.messages);
  const tool = chatToolCall(body, messages);
  const reasoning = typeof body.reasoning_effort === 'string' && body.reasoning_effort !== 'none';
  const { pieces, capped } = textPieces(settings, body.max_completion_tokens ?? body.max_tokens);
  const reasoningTokens = reasoning ? FAKE_THOUGHT_TOKENS : 0;
  const prompt = chatPromptTokens(messages) + settings.cachedTokens + settings.cacheWriteTokens;
  const completionTokens = reasoningTokens + (tool ? FAKE_TOOL_CALL_TOKENS : pieces);
  const usage = {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
    prompt_tokens_details: { cached_tokens: settings.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  const finishReason = tool ? 'tool_calls' : capped ? 'length' : 'stop';
  const callId = `call_fake${sequence}`;

  if (body.stream !== true) {
    const message: JsonObject = { role: 'assistant', content: tool ? null : settings.textPiece.repeat(pieces), refusal: null, annotations: [] };
    if (reasoning) message.reasoning_content = FAKE_THOUGHT;
    if (tool) message.tool_calls = [{ id: callId, type: 'function', function: { name: tool, arguments: TOOL_ARGUMENTS } }];
    const whole: JsonObject = {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      service_tier: 'default',
      system_fingerprint: SYSTEM_FINGERPRINT,
    };
    if (withUsage) whole.usage = usage;
    return jsonAnswer(whole);
  }

  const includeUsage = withUsage && isObject(body.stream_options) && body.stream_options.include_usage === true;
  // With include_usage, OpenAI sends `usage: null` on every chunk but the last.
  const chunk = (delta: JsonObject, finish: string | null = null) => data({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const events = [chunk({ role: 'assistant', content: tool ? null : '', refusal: null })];
  if (reasoning) events.push(chunk({ reasoning_content: FAKE_THOUGHT }));
  let cutAfter: number;
  if (tool) {
    events.push(chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: tool, arguments: '' } }] }));
    for (const piece of FAKE_TOOL_ARGUMENT_PIECES) events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    cutAfter = events.length - 1;
  } else {
    for (let i = 0; i < pieces; i++) events.push(chunk({ content: settings.textPiece }));
    cutAfter = events.length - pieces + Math.min(2, pieces);
  }
  events.push(chunk({}, finishReason));
  if (includeUsage) {
    events.push(data({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: SYSTEM_FINGERPRINT, choices: [], usage }));
  }
  return { stream: true, events, end: DONE, cutAfter };
}

/** Input tokens of a Responses request (see the rules at the top); reasoning items are not counted. */
function responsesInputTokens(body: JsonObject): number {
  let total = contentTokens(body.instructions);
  if (typeof body.input === 'string') return total + wordsIn(body.input);
  for (const item of asArray(body.input)) {
    if (!isObject(item)) continue;
    if (item.type === 'function_call') total += contentTokens(item.arguments);
    else if (item.type === 'function_call_output') total += contentTokens(item.output);
    else if (item.type !== 'reasoning') total += contentTokens(item.content);
  }
  return total;
}

/** The function a Responses request gets called, if any (see the rules at the top). */
function responsesToolCall(body: JsonObject): string | undefined {
  const offered = asArray(body.tools).flatMap((tool) => (isObject(tool) && tool.type === 'function' && typeof tool.name === 'string' ? [tool.name] : []));
  const choice = body.tool_choice;
  const forced = isObject(choice) && choice.type === 'function' && typeof choice.name === 'string' ? choice.name : undefined;
  const last = asArray(body.input).at(-1);
  return toolToCall(offered, forced, choice === 'none', isObject(last) && last.type === 'function_call_output');
}

function responses(body: JsonObject, { settings, sequence, withUsage }: AnswerContext): Answer {
  const id = `resp_fake${sequence}`;
  const createdAt = nowSeconds();
  const requestedReasoning = isObject(body.reasoning) ? body.reasoning : {};
  const reasoning = typeof requestedReasoning.effort === 'string' && requestedReasoning.effort !== 'none';
  const tool = responsesToolCall(body);
  const { pieces, capped } = textPieces(settings, body.max_output_tokens);
  const incomplete = capped && !tool;
  const reasoningTokens = reasoning ? FAKE_THOUGHT_TOKENS : 0;
  const inputTokens = responsesInputTokens(body) + settings.cachedTokens + settings.cacheWriteTokens;
  const outputTokens = reasoningTokens + (tool ? FAKE_TOOL_CALL_TOKENS : pieces);
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: settings.cachedTokens, cache_write_tokens: settings.cacheWriteTokens },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
  const text = settings.textPiece.repeat(pieces);
  const reasoningId = `rs_fake${sequence}`;
  const messageId = `msg_fake${sequence}`;
  const callId = `fc_fake${sequence}`;
  const reasoningItem = { id: reasoningId, type: 'reasoning', summary: [{ type: 'summary_text', text: FAKE_THOUGHT }] };
  const textPart = (value: string) => ({ type: 'output_text', text: value, annotations: [], logprobs: [] });
  const messageItem = (status: string, content: JsonObject[]) => ({ id: messageId, type: 'message', status, role: 'assistant', content });
  const callItem = (status: string, args: string) => ({ id: callId, type: 'function_call', status, arguments: args, call_id: `call_fake${sequence}`, name: tool });
  // OpenAI's web search runs before the answer: one `web_search_call` item per search.
  const searches = asArray(body.tools).some((tool) => isObject(tool) && typeof tool.type === 'string' && tool.type.startsWith('web_search'))
    ? settings.serverToolCalls
    : 0;
  const searchItem = (index: number, status: string) => ({
    id: `ws_fake${sequence}_${index}`,
    type: 'web_search_call',
    status,
    action: { type: 'search', query: 'fake query' },
  });
  const searchItems = Array.from({ length: searches }, (_, index) => searchItem(index, 'completed'));
  const output = [
    ...searchItems,
    ...(reasoning ? [reasoningItem] : []),
    tool ? callItem('completed', TOOL_ARGUMENTS) : messageItem(incomplete ? 'incomplete' : 'completed', [textPart(text)]),
  ];
  const finalStatus = incomplete ? 'incomplete' : 'completed';
  /** The response object at one stage: its parameters are the request's. */
  const response = (status: string, items: unknown[], extra: JsonObject = {}): JsonObject => ({
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: String(body.model),
    output: items,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null, ...requestedReasoning },
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: null,
    user: body.user ?? null,
    ...extra,
  });
  const finished = () => response(finalStatus, output, withUsage ? { usage } : { usage: undefined });

  if (body.stream !== true) return jsonAnswer(finished());

  const events: string[] = [];
  const emit = (type: string, fields: JsonObject) => events.push(namedEvent(type, { type, sequence_number: events.length, ...fields }));
  emit('response.created', { response: response('in_progress', []) });
  emit('response.in_progress', { response: response('in_progress', []) });
  let outputIndex = 0;
  for (const item of searchItems) {
    const at = { item_id: item.id, output_index: outputIndex };
    emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress' } });
    for (const stage of ['in_progress', 'searching', 'completed']) emit(`response.web_search_call.${stage}`, at);
    emit('response.output_item.done', { output_index: outputIndex, item });
    outputIndex += 1;
  }
  if (reasoning) {
    const at = { item_id: reasoningId, output_index: outputIndex, summary_index: 0 };
    emit('response.output_item.added', { output_index: outputIndex, item: { ...reasoningItem, summary: [] } });
    emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    emit('response.reasoning_summary_text.delta', { ...at, delta: FAKE_THOUGHT });
    emit('response.reasoning_summary_text.done', { ...at, text: FAKE_THOUGHT });
    emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: FAKE_THOUGHT } });
    emit('response.output_item.done', { output_index: outputIndex, item: reasoningItem });
    outputIndex += 1;
  }
  let cutAfter: number;
  if (tool) {
    const at = { item_id: callId, output_index: outputIndex };
    emit('response.output_item.added', { output_index: outputIndex, item: callItem('in_progress', '') });
    for (const delta of FAKE_TOOL_ARGUMENT_PIECES) emit('response.function_call_arguments.delta', { ...at, delta });
    cutAfter = events.length - 1;
    emit('response.function_call_arguments.done', { ...at, arguments: TOOL_ARGUMENTS });
  } else {
    const at = { item_id: messageId, output_index: outputIndex, content_index: 0 };
    emit('response.output_item.added', { output_index: outputIndex, item: messageItem('in_progress', []) });
    emit('response.content_part.added', { ...at, part: textPart('') });
    cutAfter = events.length + Math.min(2, pieces);
    for (let i = 0; i < pieces; i++) emit('response.output_text.delta', { ...at, delta: settings.textPiece, logprobs: [] });
    emit('response.output_text.done', { ...at, text, logprobs: [] });
    emit('response.content_part.done', { ...at, part: textPart(text) });
  }
  emit('response.output_item.done', { output_index: outputIndex, item: output.at(-1) });
  emit(`response.${finalStatus}`, { response: finished() });
  const failure = { code: 'server_error', message: 'The server had an error while processing your request. Sorry about that!' };
  const errorEvent = namedEvent('error', { type: 'error', sequence_number: cutAfter, error: { type: 'server_error', param: null, ...failure } })
    + namedEvent('response.failed', { type: 'response.failed', sequence_number: cutAfter + 1, response: response('failed', [], { error: failure }) });
  return { stream: true, events, cutAfter, errorEvent };
}

/** Embedding inputs as (text the vector is derived from, prompt tokens). */
function embeddingInputs(input: unknown): { text: string; tokens: number }[] {
  if (typeof input === 'string') return [{ text: input, tokens: wordsIn(input) }];
  const items = asArray(input);
  if (items.every((item) => typeof item === 'number')) return items.length ? [{ text: items.join(' '), tokens: items.length }] : [];
  return items.map((item) => typeof item === 'string'
    ? { text: item, tokens: wordsIn(item) }
    : { text: asArray(item).join(' '), tokens: asArray(item).length });
}

function embeddings(body: JsonObject, { withUsage }: AnswerContext): Answer {
  const dimensions = embeddingDimensions(body.dimensions);
  const base64 = body.encoding_format === 'base64';
  const inputs = embeddingInputs(body.input);
  const data = inputs.map(({ text }, index) => {
    const values = fakeEmbedding(text, dimensions);
    return {
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(new Float32Array(values).buffer).toString('base64') : values,
    };
  });
  const tokens = inputs.reduce((sum, input) => sum + input.tokens, 0);
  const whole: JsonObject = { object: 'list', data, model: String(body.model) };
  if (withUsage) whole.usage = { prompt_tokens: tokens, total_tokens: tokens };
  return jsonAnswer(whole);
}

export const openAiProvider: FakeProvider = {
  dialect: 'openai',
  operation(path) {
    if (path.endsWith('/v1/chat/completions')) return chatCompletion;
    if (path.endsWith('/v1/completions')) return completion;
    if (path.endsWith('/v1/responses')) return responses;
    if (path.endsWith('/v1/embeddings')) return embeddings;
    const v1 = path.lastIndexOf('/v1/');
    return v1 === -1 ? undefined : MEDIA_OPERATIONS.get(path.slice(v1 + 4));
  },
  apiKey: bearerToken,
  invalidJson: { status: 400, body: error('We could not parse the JSON body of your request.', 'invalid_request_error', null) },
  faults: FAULTS,
  malformedEvent: `data: {"choices": [{"text": "unterminated${SEPARATOR}`,
  errorEvent: data(error('The server had an error while processing your request. Sorry about that!', 'server_error', null)),
};
