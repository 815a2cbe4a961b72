import { dataUrlContent } from '../../core/media';
import type { ChatCompletionBody, ChatCompletionMessage } from '../../endpoints/chat-completions/request';
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ImageSource,
  InlineImageSource,
  ReasoningRequest,
  ResponseFormat,
  ToolChoice,
  ToolDefinition,
} from '../../core/chat';
import { assistantMessageToOpenAI } from './chat-response';

type Source = ImageSource | InlineImageSource;
type MessageOf<Role extends ChatCompletionMessage['role']> = Extract<ChatCompletionMessage, { role: Role }>;

const BASE64_HEADER_END = ';base64';

/** A `data:` URL with a media type becomes inline data; anything else (http(s), other data URLs) stays a URL. */
export function sourceOfUrl(url: string): Source {
  const inline = url.startsWith('data:') ? dataUrlContent(url) : undefined;
  return inline?.mediaType ? { kind: 'base64', ...inline } : { kind: 'url', url };
}

function urlOfSource(source: Source): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType}${BASE64_HEADER_END},${source.data}`;
}

/** OpenAI's chat `file` input takes PDFs; bare base64 `file_data` is one. */
const BARE_FILE_MEDIA_TYPE = 'application/pdf';

/** A file's `file_data`: a data URL, an http(s) URL, or bare base64 (a PDF). */
export function fileSourceOf(fileData: string): Source {
  if (fileData.startsWith('data:') || /^https?:\/\//i.test(fileData)) return sourceOfUrl(fileData);
  return { kind: 'base64', mediaType: BARE_FILE_MEDIA_TYPE, data: fileData };
}

function textParts(content: string | readonly { text: string }[]): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part) => ({ type: 'text', text: part.text }));
}

function userParts(content: MessageOf<'user'>['content']): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: ContentPart[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        parts.push({ type: 'text', text: part.text });
        break;
      case 'image_url':
        parts.push({ type: 'image', source: sourceOfUrl(part.image_url.url), detail: part.image_url.detail ?? undefined });
        break;
      case 'input_audio':
        parts.push({ type: 'audio', format: part.input_audio.format, data: part.input_audio.data });
        break;
      case 'file':
        // A `file_id` names a file stored at OpenAI: no other provider can read it, so it is dropped.
        if (part.file.file_data) parts.push({ type: 'file', source: fileSourceOf(part.file.file_data), name: part.file.filename ?? undefined });
        break;
    }
  }
  return parts;
}

/** Reasoning first (it came before the answer), then the text, then the tool calls. */
function assistantParts(message: MessageOf<'assistant'>): ContentPart[] {
  const parts: ContentPart[] = [];
  if (message.reasoning_content) parts.push({ type: 'reasoning', text: message.reasoning_content });
  const content = message.content;
  if (typeof content === 'string') {
    if (content !== '') parts.push({ type: 'text', text: content });
  } else if (content) {
    for (const part of content) parts.push({ type: 'text', text: part.type === 'text' ? part.text : part.refusal });
  }
  // Custom (free-form) tool calls have no counterpart elsewhere and are dropped with their tools.
  for (const call of message.tool_calls ?? []) {
    if (call.type === 'function') parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return parts;
}

function withName(message: ChatMessage, name: string | null | undefined): ChatMessage {
  return name ? { ...message, name } : message;
}

function toolsFromOpenAI(tools: ChatCompletionBody['tools']): ToolDefinition[] | undefined {
  const functions: ToolDefinition[] = [];
  for (const tool of tools ?? []) {
    if (tool.type !== 'function') continue;
    const { name, description, parameters } = tool.function;
    functions.push({ name, description: description ?? undefined, parameters: parameters ?? undefined });
  }
  return functions.length > 0 ? functions : undefined;
}

function toolChoiceFromOpenAI(choice: ChatCompletionBody['tool_choice']): ToolChoice | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function') return { name: choice.function.name };
  // An allowed-tools list keeps its mode; a custom tool is dropped with the custom tools.
  if (choice.type === 'allowed_tools') return choice.allowed_tools.mode;
  return undefined;
}

function responseFormatFromOpenAI(format: ChatCompletionBody['response_format']): ResponseFormat | undefined {
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type !== 'json_schema') return undefined;
  const { name, schema, strict } = format.json_schema;
  return { type: 'json_schema', name, schema: schema ?? {}, strict: strict ?? undefined };
}

/**
 * OpenAI's reasoning levels in internal terms. `none` asks for no reasoning, which is what a
 * request without any says elsewhere; levels above `high` are the highest other providers know.
 */
const REASONING_EFFORTS = new Map<string, ReasoningRequest['effort']>([
  ['minimal', 'minimal'],
  ['low', 'low'],
  ['medium', 'medium'],
  ['high', 'high'],
  ['xhigh', 'high'],
  ['max', 'high'],
]);

export function reasoningFromOpenAI(effort: string | null | undefined): ReasoningRequest | undefined {
  const level = effort ? REASONING_EFFORTS.get(effort) : undefined;
  return level ? { effort: level } : undefined;
}

/**
 * An OpenAI chat request in the internal form (docs/api.md 2.6). System and developer messages,
 * wherever they are, become the system text in their order; each tool message one `tool` turn.
 */
export function chatRequestFromOpenAI(body: ChatCompletionBody): ChatRequest {
  const system: ContentPart[] = [];
  const messages: ChatMessage[] = [];
  for (const message of body.messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(message.content));
        break;
      case 'user':
        messages.push(withName({ role: 'user', content: userParts(message.content) }, message.name));
        break;
      case 'assistant':
        messages.push(withName({ role: 'assistant', content: assistantParts(message) }, message.name));
        break;
      case 'tool':
        messages.push({ role: 'tool', content: [{ type: 'tool_result', toolCallId: message.tool_call_id, content: textParts(message.content) }] });
        break;
    }
  }
  const stop = body.stop ?? undefined;
  return {
    model: body.model,
    system,
    messages,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: typeof stop === 'string' ? [stop] : stop,
    n: body.n ?? undefined,
    seed: body.seed ?? undefined,
    tools: toolsFromOpenAI(body.tools),
    toolChoice: toolChoiceFromOpenAI(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: responseFormatFromOpenAI(body.response_format),
    reasoning: reasoningFromOpenAI(body.reasoning_effort),
    stream: body.stream === true,
    user: body.user ?? undefined,
  };
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
