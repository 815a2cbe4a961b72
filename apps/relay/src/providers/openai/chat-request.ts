import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ImageSource,
  InlineImageSource,
  ReasoningRequest,
  ResponseFormat,
  ToolChoice,
} from '../../core/chat';
import { assistantMessageToOpenAI } from './chat-response';

type Source = ImageSource | InlineImageSource;

const BASE64_HEADER_END = ';base64';

function urlOfSource(source: Source): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType}${BASE64_HEADER_END},${source.data}`;
}

/** Text parts as OpenAI content: one text as a string (what every compatible server reads), several as parts. */
function textContent(parts: ContentPart[]): string | { type: 'text'; text: string }[] {
  const texts = parts.flatMap((part) => (part.type === 'text' ? [{ type: 'text' as const, text: part.text }] : []));
  return texts.length > 1 ? texts : (texts[0]?.text ?? '');
}

function userPartToOpenAI(part: ContentPart): Record<string, unknown> | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: part.detail ? { url: urlOfSource(part.source), detail: part.detail } : { url: urlOfSource(part.source) } };
    case 'audio':
      return { type: 'input_audio', input_audio: { data: part.data, format: part.format } };
    case 'file':
      return { type: 'file', file: part.name ? { file_data: urlOfSource(part.source), filename: part.name } : { file_data: urlOfSource(part.source) } };
    default:
      return undefined;
  }
}

function userMessageToOpenAI(message: ChatMessage): Record<string, unknown> | undefined {
  const parts = message.content.filter((part) => part.type !== 'tool_result');
  if (parts.length === 0) return undefined;
  const content = parts.every((part) => part.type === 'text')
    ? textContent(parts)
    : parts.flatMap((part) => userPartToOpenAI(part) ?? []);
  return { role: 'user', content, ...(message.name ? { name: message.name } : {}) };
}

/** Each tool result is one OpenAI `tool` message; OpenAI tool messages hold text only. */
function toolMessagesToOpenAI(message: ChatMessage): Record<string, unknown>[] {
  return message.content.flatMap((part) =>
    part.type === 'tool_result' ? [{ role: 'tool', tool_call_id: part.toolCallId, content: textContent(part.content) }] : [],
  );
}

function messagesToOpenAI(request: ChatRequest): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  if (request.system.some((part) => part.type === 'text')) messages.push({ role: 'system', content: textContent(request.system) });
  for (const message of request.messages) {
    if (message.role === 'assistant') {
      messages.push({ ...assistantMessageToOpenAI(message.content), ...(message.name ? { name: message.name } : {}) });
      continue;
    }
    messages.push(...toolMessagesToOpenAI(message));
    const user = message.role === 'user' ? userMessageToOpenAI(message) : undefined;
    if (user) messages.push(user);
  }
  return messages;
}

function toolChoiceToOpenAI(choice: ToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function responseFormatToOpenAI(format: ResponseFormat): Record<string, unknown> {
  if (format.type === 'json_object') return { type: 'json_object' };
  // OpenAI requires a schema name; other dialects have none.
  const jsonSchema: Record<string, unknown> = { name: format.name ?? 'response', schema: format.schema };
  if (format.strict !== undefined) jsonSchema.strict = format.strict;
  return { type: 'json_schema', json_schema: jsonSchema };
}

/** The largest thinking budgets read as OpenAI's `low` and `medium` efforts; a larger one is `high`. */
const LOW_EFFORT_BUDGET = 1024;
const MEDIUM_EFFORT_BUDGET = 8192;

/**
 * `reasoning_effort` for an internal request: its effort, else its thinking budget (Anthropic
 * `budget_tokens`, Gemini `thinkingBudget`) as the nearest level. A budget of 0 is thinking turned
 * off (`none`); a negative one (Gemini's "dynamic") leaves the model its default.
 */
function reasoningEffortToOpenAI(reasoning: ReasoningRequest | undefined): string | undefined {
  if (reasoning?.effort !== undefined) return reasoning.effort;
  const budget = reasoning?.budgetTokens;
  if (budget === undefined || budget < 0) return undefined;
  if (budget === 0) return 'none';
  if (budget <= LOW_EFFORT_BUDGET) return 'low';
  return budget <= MEDIUM_EFFORT_BUDGET ? 'medium' : 'high';
}

/**
 * The OpenAI chat body for an internal request. `max_completion_tokens` is OpenAI's current limit
 * field (its reasoning models refuse `max_tokens`); streams always ask for usage, so the charge
 * is the provider's count (docs/api.md 2.1). Extras of other dialects are dropped.
 */
export function chatRequestToOpenAI(request: ChatRequest, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, messages: messagesToOpenAI(request) };
  if (request.maxTokens !== undefined) body.max_completion_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.n !== undefined) body.n = request.n;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(({ name, description, parameters }) => ({
      type: 'function',
      function: { name, ...(description !== undefined ? { description } : {}), ...(parameters !== undefined ? { parameters } : {}) },
    }));
  }
  if (request.toolChoice !== undefined) body.tool_choice = toolChoiceToOpenAI(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.responseFormat !== undefined) body.response_format = responseFormatToOpenAI(request.responseFormat);
  const effort = reasoningEffortToOpenAI(request.reasoning);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (request.user !== undefined) body.user = request.user;
  if (request.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
