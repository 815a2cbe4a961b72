import { dataUrlContent } from '../../core/media';
import type { ChatCompletionBody, ChatCompletionMessage } from './chat-request';
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

type Source = ImageSource | InlineImageSource;
type MessageOf<Role extends ChatCompletionMessage['role']> = Extract<ChatCompletionMessage, { role: Role }>;

/** A `data:` URL with a media type becomes inline data; anything else (http(s), other data URLs) stays a URL. */
export function sourceOfUrl(url: string): Source {
  const inline = url.startsWith('data:') ? dataUrlContent(url) : undefined;
  return inline?.mediaType ? { kind: 'base64', ...inline } : { kind: 'url', url };
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
