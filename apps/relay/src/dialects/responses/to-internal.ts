import { AppError } from '@modelgate/errors';
import type { ResponsesBody, ResponsesInputItem } from './request';
import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, ToolChoice, ToolDefinition } from '../../core/chat';
import { isJsonObject } from '../../core/json';
import { fileSourceOf, reasoningFromOpenAI, sourceOfUrl } from '../openai/chat-to-internal';
import { type ReasoningPart, reasoningPartOf } from './reasoning';
import { argumentsOfInput, customToolFunction } from './custom-tools';

function invalid(param: string, problem: string): AppError {
  return new AppError('invalid_request', `${param}: ${problem}`, { param });
}

/**
 * Fields that refer to state OpenAI keeps (docs/api.md 2.10): a translated channel has none, and
 * ignoring them would answer another question than the one asked. Each with what to send instead.
 */
const STORED_STATE_FIELDS: [field: string, instead: string][] = [
  ['previous_response_id', 'send the whole conversation in `input`'],
  ['conversation', 'send the whole conversation in `input`'],
  ['prompt', 'send the prompt itself in `instructions` and `input`'],
];

function refuseStoredState(body: ResponsesBody): void {
  for (const [field, instead] of STORED_STATE_FIELDS) {
    if (body[field] !== undefined && body[field] !== null) {
      throw invalid(field, `this model's channel serves Responses without stored state; ${instead}`);
    }
  }
}

/**
 * Items that hold nothing a model on another provider could use: records of OpenAI's hosted tools
 * whose outcome the answer after them already states (a web search's results are the message's
 * citations), and the bookkeeping of its hosted MCP connections. Every other item a translation
 * cannot express (client-run built-in tool calls and their outputs, stored references, compaction)
 * is a 400: dropping it would change the conversation the model sees.
 */
const CONTENTLESS_ITEM_TYPES = new Set(['web_search_call', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response']);

function stringField(object: Record<string, unknown>, field: string, param: string): string {
  const value = object[field];
  if (typeof value !== 'string') throw invalid(`${param}.${field}`, 'must be a string');
  return value;
}

function idField(object: Record<string, unknown>, field: string, param: string): string {
  const value = stringField(object, field, param);
  if (value === '') throw invalid(`${param}.${field}`, 'must not be empty');
  return value;
}

/** A non-empty string field, or undefined. */
function optionalString(object: Record<string, unknown>, field: string): string | undefined {
  const value = object[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function storedFileError(param: string, fileId: string, instead: string): AppError {
  return invalid(param, `file_id ${JSON.stringify(fileId)} names a file stored at OpenAI, which this model's channel cannot read; ${instead}`);
}

function imagePartOf(part: Record<string, unknown>, param: string): ContentPart {
  const url = optionalString(part, 'image_url');
  if (url !== undefined) return { type: 'image', source: sourceOfUrl(url), detail: optionalString(part, 'detail') };
  const fileId = optionalString(part, 'file_id');
  if (fileId !== undefined) throw storedFileError(param, fileId, 'send the image as image_url (a URL or a data URL)');
  throw invalid(param, 'an input_image needs an image_url');
}

function filePartOf(part: Record<string, unknown>, param: string): ContentPart {
  const name = optionalString(part, 'filename');
  const data = optionalString(part, 'file_data');
  if (data !== undefined) return { type: 'file', source: fileSourceOf(data), name };
  const url = optionalString(part, 'file_url');
  if (url !== undefined) return { type: 'file', source: { kind: 'url', url }, name };
  const fileId = optionalString(part, 'file_id');
  if (fileId !== undefined) throw storedFileError(param, fileId, 'send the file as file_data (a data URL) or file_url');
  throw invalid(param, 'an input_file needs file_data or file_url');
}

function contentPartOf(part: unknown, param: string): ContentPart {
  if (!isJsonObject(part)) throw invalid(param, 'must be a content part object');
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: stringField(part, 'text', param) };
    case 'refusal':
      return { type: 'text', text: stringField(part, 'refusal', param) };
    case 'input_image':
      return imagePartOf(part, param);
    case 'input_file':
      return filePartOf(part, param);
    default:
      throw invalid(param, `content parts of type ${JSON.stringify(part.type)} are not supported`);
  }
}

/** A message's `content` or a function call's `output`: a string, or content parts. */
function contentOf(value: unknown, param: string): ContentPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  if (!Array.isArray(value)) throw invalid(param, 'must be a string or an array of content parts');
  return value.map((part, index) => contentPartOf(part, `${param}.${index}`));
}

/** System, developer and assistant messages hold text (an assistant's refusal is its text). */
function textOnly(parts: ContentPart[], param: string, role: string): ContentPart[] {
  for (const [index, part] of parts.entries()) {
    if (part.type !== 'text') throw invalid(`${param}.${index}`, `a ${role} message holds text only`);
  }
  return parts;
}

/** Reasoning text: its full text (`content`) when the item has it, else its summaries. */
function reasoningTexts(value: unknown, param: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(param, 'must be an array');
  return value.map((entry, index) => {
    if (!isJsonObject(entry) || typeof entry.text !== 'string') throw invalid(`${param}.${index}`, 'must be an object with a text');
    return entry.text;
  });
}

function reasoningOf(item: Record<string, unknown>, param: string): ReasoningPart | undefined {
  const content = reasoningTexts(item.content, `${param}.content`);
  const texts = content.length > 0 ? content : reasoningTexts(item.summary, `${param}.summary`);
  return reasoningPartOf(texts.join('\n\n'), item.encrypted_content);
}

/** The conversation being read: system text apart, turns in order. */
interface Conversation {
  system: ContentPart[];
  messages: ChatMessage[];
}

/**
 * The turn an assistant item or a tool output joins: the last one when it is of the same role, so
 * that consecutive assistant items (reasoning, message, function calls) are one assistant turn and
 * consecutive outputs one tool turn, as providers that answer parallel calls expect them.
 */
function turnOf(conversation: Conversation, role: 'assistant' | 'tool'): ContentPart[] {
  const last = conversation.messages.at(-1);
  if (last?.role === role) return last.content;
  const turn: ChatMessage = { role, content: [] };
  conversation.messages.push(turn);
  return turn.content;
}

function addMessage(item: ResponsesInputItem, param: string, conversation: Conversation): void {
  const contentParam = `${param}.content`;
  const content = contentOf(item.content, contentParam);
  switch (item.role) {
    case 'system':
    case 'developer':
      conversation.system.push(...textOnly(content, contentParam, item.role));
      break;
    case 'user':
      conversation.messages.push({ role: 'user', content });
      break;
    case 'assistant':
      turnOf(conversation, 'assistant').push(...textOnly(content, contentParam, item.role));
      break;
    default:
      throw invalid(`${param}.role`, 'must be user, assistant, system or developer');
  }
}

function addItem(item: ResponsesInputItem, param: string, conversation: Conversation): void {
  const type = item.type ?? 'message';
  switch (type) {
    case 'message':
      addMessage(item, param, conversation);
      return;
    case 'reasoning': {
      const part = reasoningOf(item, param);
      if (part) turnOf(conversation, 'assistant').push(part);
      return;
    }
    case 'function_call':
      turnOf(conversation, 'assistant').push({
        type: 'tool_call',
        id: idField(item, 'call_id', param),
        name: idField(item, 'name', param),
        arguments: stringField(item, 'arguments', param),
      });
      return;
    case 'custom_tool_call':
      turnOf(conversation, 'assistant').push({
        type: 'tool_call',
        id: idField(item, 'call_id', param),
        name: idField(item, 'name', param),
        arguments: argumentsOfInput(stringField(item, 'input', param)),
      });
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      turnOf(conversation, 'tool').push({
        type: 'tool_result',
        toolCallId: idField(item, 'call_id', param),
        content: contentOf(item.output, `${param}.output`),
      });
      return;
    default:
      if (CONTENTLESS_ITEM_TYPES.has(type)) return;
      throw invalid(param, `items of type ${JSON.stringify(type)} cannot be sent to this model's channel (it runs no OpenAI tools)`);
  }
}

/** Function tools, and custom (free-form) tools as functions of their input; built-in tools run only at OpenAI. */
function toolsOf(tools: ResponsesBody['tools']): ToolDefinition[] | undefined {
  const functions: ToolDefinition[] = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    if (tool.type !== 'function' && tool.type !== 'custom') continue;
    if (!tool.name) throw invalid(`tools.${index}.name`, `a ${tool.type} tool needs a name`);
    functions.push(
      tool.type === 'custom'
        ? customToolFunction(tool.name, tool)
        : { name: tool.name, description: tool.description ?? undefined, parameters: tool.parameters ?? undefined },
    );
  }
  return functions.length > 0 ? functions : undefined;
}

function toolChoiceOf(choice: ResponsesBody['tool_choice']): ToolChoice | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' || choice.type === 'custom') {
    if (!choice.name) throw invalid('tool_choice.name', `a ${choice.type} tool choice needs a name`);
    return { name: choice.name };
  }
  // An allowed-tools list keeps its mode; a built-in tool is dropped with the tools.
  if (choice.type === 'allowed_tools' && (choice.mode === 'auto' || choice.mode === 'required')) return choice.mode;
  return undefined;
}

function responseFormatOf(text: ResponsesBody['text']): ResponseFormat | undefined {
  const format = text?.format;
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type !== 'json_schema') return undefined;
  return { type: 'json_schema', name: format.name, schema: format.schema, strict: format.strict ?? undefined };
}

/** Chat's name for the conversation, which the providers' conversions give the content they refuse. */
const CHAT_CONVERSATION = 'messages';

/**
 * A client error a provider raised while writing the internal form of a Responses request: about
 * `messages` as chat names the conversation, which the Responses client sent as `input`.
 */
export function inResponsesTerms(err: unknown): unknown {
  if (!(err instanceof AppError) || err.param !== CHAT_CONVERSATION) return err;
  const message = err.message.startsWith(`${CHAT_CONVERSATION}:`) ? `input${err.message.slice(CHAT_CONVERSATION.length)}` : err.message;
  return new AppError(err.code, message, { status: err.status, type: err.type, param: 'input' });
}

/**
 * A Responses request (docs/api.md 2.10) in the internal form, for a channel that does not speak it
 * natively. `instructions` and system / developer messages, wherever they are, become the system
 * text in order; consecutive assistant items one assistant turn; consecutive tool call outputs one
 * tool turn; custom tools and their calls are functions of one string argument (custom-tools.ts).
 * Stateless: fields naming stored state are 400; `store` is ignored. Throws AppError
 * `invalid_request` (param = the item's path, as `input.3.content.1`) for an item it cannot read.
 */
export function chatRequestFromResponses(body: ResponsesBody): ChatRequest {
  refuseStoredState(body);
  const conversation: Conversation = { system: [], messages: [] };
  if (body.instructions) conversation.system.push({ type: 'text', text: body.instructions });
  if (typeof body.input === 'string') {
    conversation.messages.push({ role: 'user', content: [{ type: 'text', text: body.input }] });
  } else {
    for (const [index, item] of (body.input ?? []).entries()) addItem(item, `input.${index}`, conversation);
  }
  if (conversation.messages.length === 0) throw invalid('input', 'must hold at least one message');
  return {
    model: body.model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    tools: toolsOf(body.tools),
    toolChoice: toolChoiceOf(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: responseFormatOf(body.text),
    reasoning: reasoningFromOpenAI(body.reasoning?.effort),
    stream: body.stream === true,
    user: body.user ?? undefined,
  };
}
