import { AppError } from '@modelgate/errors';
import type { ChatMessage, ChatRequest, ContentPart, ImageSource, InlineImageSource, ReasoningRequest, ToolChoice, ToolDefinition } from '../../core/chat';
import { toolArgumentsOf } from '../../core/json';
import { dataUrlContent } from '../../core/media';
import { alternatingTurns } from '../turns';

/** The Converse API's request shapes as the relay writes them; binary data is base64 in JSON. */
type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
type DocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';

interface ImageBlock {
  image: { format: ImageFormat; source: { bytes: string } };
}

interface DocumentBlock {
  document: { format: DocumentFormat; name: string; source: { bytes: string } };
}

type ToolResultContent = { text: string } | ImageBlock | DocumentBlock;

export type ConverseBlock =
  | { text: string }
  | ImageBlock
  | DocumentBlock
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: ToolResultContent[]; status?: 'error' } }
  | { reasoningContent: { reasoningText: { text: string; signature: string } } | { redactedContent: string } };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ConverseRequestBody {
  messages: ConverseMessage[];
  system?: { text: string }[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: {
    tools: { toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }[];
    toolChoice?: ConverseToolChoice;
  };
  additionalModelRequestFields?: Record<string, unknown>;
}

const IMAGE_FORMATS = new Map<string, ImageFormat>([
  ['image/png', 'png'],
  ['image/jpeg', 'jpeg'],
  ['image/jpg', 'jpeg'],
  ['image/gif', 'gif'],
  ['image/webp', 'webp'],
]);

const DOCUMENT_FORMATS = new Map<string, DocumentFormat>([
  ['application/pdf', 'pdf'],
  ['text/csv', 'csv'],
  ['application/msword', 'doc'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
  ['application/vnd.ms-excel', 'xls'],
  ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'],
  ['text/html', 'html'],
  ['text/plain', 'txt'],
  ['text/markdown', 'md'],
]);

/** OpenAI's temperature goes to 2, Converse's to 1. */
const MAX_TEMPERATURE = 1;

/** A document name may hold letters, digits, single spaces, hyphens, parentheses and square brackets. */
const NAME_FORBIDDEN = /[^A-Za-z0-9\s\-()[\]]+/g;
const SPACES = /\s+/g;

/** Amazon Nova 2 models take a reasoning effort (`reasoningConfig`); the other Converse models do not. */
const NOVA_2 = /amazon\.nova-2/;

/** Every content problem is the client's, in its `messages` (docs/api.md 2.6). */
function invalidContent(message: string): AppError {
  return new AppError('invalid_request', `messages: ${message}`, { param: 'messages' });
}

/**
 * Inline media's type and base64 data. Converse takes media inline or from S3, never by URL:
 * dropping the image would answer another question than the one asked (docs/api.md 2.6), so a link is refused.
 */
function inlineMedia(source: ImageSource | InlineImageSource): { mediaType: string; data: string } {
  if (source.kind === 'base64') return source;
  if (!source.url.startsWith('data:')) throw invalidContent('Bedrock Converse takes images and files inline (data: URLs), not by http(s) URL');
  const inline = dataUrlContent(source.url);
  if (!inline) throw invalidContent('a data URL is not valid');
  return inline;
}

function imageOf(source: ImageSource | InlineImageSource): ImageBlock {
  const { mediaType, data } = inlineMedia(source);
  const format = IMAGE_FORMATS.get(mediaType.toLowerCase());
  if (!format) throw invalidContent(`Bedrock Converse takes PNG, JPEG, GIF and WebP images, not ${mediaType || 'an untyped image'}`);
  return { image: { format, source: { bytes: data } } };
}

/** Builds one request's blocks; documents are numbered, as each needs a name of its own. */
class BlockWriter {
  private documents = 0;

  documentOf(source: ImageSource | InlineImageSource, name: string | undefined): DocumentBlock {
    const { mediaType, data } = inlineMedia(source);
    const format = DOCUMENT_FORMATS.get(mediaType.toLowerCase());
    if (!format) throw invalidContent(`Bedrock Converse cannot read a file of type ${mediaType || 'unknown'}`);
    this.documents += 1;
    const readable = (name ?? '').replace(NAME_FORBIDDEN, ' ').replace(SPACES, ' ').trim();
    return { document: { format, name: `${readable || 'document'} (${this.documents})`, source: { bytes: data } } };
  }

  /** A tool's result: its text, images and files; an empty result is one empty text. */
  private toolResultContent(parts: ContentPart[]): ToolResultContent[] {
    const content: ToolResultContent[] = [];
    for (const part of parts) {
      if (part.type === 'text') content.push({ text: part.text });
      else if (part.type === 'image') content.push(imageOf(part.source));
      else if (part.type === 'file') content.push(this.documentOf(part.source, part.name));
    }
    return content.length === 0 ? [{ text: '' }] : content;
  }

  /**
   * One internal part as a Converse block, or undefined when it has none that would be accepted:
   * empty text (Converse refuses blank text), and reasoning without a signature (another
   * provider's, which the model cannot verify).
   */
  blockOf(part: ContentPart): ConverseBlock | undefined {
    switch (part.type) {
      case 'text':
        return part.text === '' ? undefined : { text: part.text };
      case 'image':
        return imageOf(part.source);
      case 'file':
        return this.documentOf(part.source, part.name);
      case 'audio':
        throw invalidContent('audio input is not supported by this model');
      case 'reasoning':
        return part.signature ? { reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } } : undefined;
      case 'redacted_reasoning':
        return { reasoningContent: { redactedContent: part.data } };
      case 'tool_call':
        return { toolUse: { toolUseId: part.id, name: part.name, input: toolArgumentsOf(part) } };
      case 'tool_result':
        return {
          toolResult: { toolUseId: part.toolCallId, content: this.toolResultContent(part.content), ...(part.isError ? { status: 'error' as const } : {}) },
        };
    }
  }
}

/** The turns strictly alternating, as Converse requires, tool results in the user turn after the calls. */
function messagesOf(messages: ChatMessage[], writer: BlockWriter): ConverseMessage[] {
  return alternatingTurns(messages, (message) => message.content.flatMap((part) => writer.blockOf(part) ?? [])).map(({ assistant, items }) => ({
    role: assistant ? 'assistant' : 'user',
    content: items,
  }));
}

function toolSpecOf(tool: ToolDefinition): NonNullable<ConverseRequestBody['toolConfig']>['tools'][number] {
  return {
    toolSpec: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      // Converse requires an object schema; OpenAI lets a tool omit its parameters.
      inputSchema: { json: { type: 'object', properties: {}, ...tool.parameters } },
    },
  };
}

function toolChoiceOf(choice: ToolChoice | undefined): ConverseToolChoice | undefined {
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  if (typeof choice === 'object') return { tool: { name: choice.name } };
  return undefined;
}

/** The names of the tools the conversation's tool calls used. */
function calledToolNames(messages: ConverseMessage[]): Set<string> {
  const names = new Set<string>();
  for (const message of messages) for (const block of message.content) if ('toolUse' in block) names.add(block.toolUse.name);
  return names;
}

function holdsToolBlocks(messages: ConverseMessage[]): boolean {
  return messages.some((message) => message.content.some((block) => 'toolUse' in block || 'toolResult' in block));
}

/**
 * The tools offered. Converse has no "none": such a request goes without tools, unless the
 * conversation holds tool calls or results, which Converse only accepts with tools defined: then
 * the offered ones, or (a last turn that offers none) the called ones with any arguments.
 */
function toolConfigOf(request: ChatRequest, messages: ConverseMessage[]): ConverseRequestBody['toolConfig'] {
  const offered = (request.tools ?? []).map(toolSpecOf);
  const holdsTools = holdsToolBlocks(messages);
  if (!holdsTools && (offered.length === 0 || request.toolChoice === 'none')) return undefined;
  const tools = offered.length > 0 ? offered : [...calledToolNames(messages)].map((name) => toolSpecOf({ name }));
  if (tools.length === 0) return undefined;
  const toolChoice = offered.length > 0 ? toolChoiceOf(request.toolChoice) : undefined;
  return toolChoice ? { tools, toolChoice } : { tools };
}

/** A thinking budget as Nova's reasoning effort (Nova 2 takes low, medium or high). */
function reasoningEffortOf(reasoning: ReasoningRequest): 'low' | 'medium' | 'high' | undefined {
  const { effort, budgetTokens } = reasoning;
  if (budgetTokens === 0) return undefined;
  if (effort) return effort === 'minimal' ? 'low' : effort;
  if (budgetTokens === undefined || budgetTokens < 0) return 'medium';
  if (budgetTokens <= 2048) return 'low';
  return budgetTokens <= 8192 ? 'medium' : 'high';
}

/** Reasoning where the model takes it; elsewhere it is dropped (docs/api.md 2.6). */
function additionalFieldsOf(upstreamModel: string, reasoning: ReasoningRequest | undefined): Record<string, unknown> | undefined {
  if (!reasoning || !NOVA_2.test(upstreamModel)) return undefined;
  const effort = reasoningEffortOf(reasoning);
  return effort ? { reasoningConfig: { type: 'enabled', maxReasoningEffort: effort } } : undefined;
}

function inferenceConfigOf(request: ChatRequest): ConverseRequestBody['inferenceConfig'] {
  const config: NonNullable<ConverseRequestBody['inferenceConfig']> = {};
  if (request.maxTokens !== undefined) config.maxTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = Math.min(Math.max(request.temperature, 0), MAX_TEMPERATURE);
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.stop?.length) config.stopSequences = request.stop;
  return Object.keys(config).length === 0 ? undefined : config;
}

/**
 * A Converse request for an internal chat request (docs/api.md 2.6, 2.12). Response formats,
 * seeds, users and parallel-call settings have no Converse equivalent and are dropped; more than
 * one choice cannot be had (400).
 */
export function converseRequestOf(upstreamModel: string, request: ChatRequest): ConverseRequestBody {
  if (request.n !== undefined && request.n > 1) {
    throw new AppError('invalid_request', 'n: Bedrock Converse returns one choice; n must be 1', { param: 'n' });
  }
  const writer = new BlockWriter();
  const body: ConverseRequestBody = { messages: messagesOf(request.messages, writer) };
  const system = request.system.flatMap((part) => (part.type === 'text' && part.text !== '' ? [{ text: part.text }] : []));
  if (system.length > 0) body.system = system;
  const inferenceConfig = inferenceConfigOf(request);
  if (inferenceConfig) body.inferenceConfig = inferenceConfig;
  const toolConfig = toolConfigOf(request, body.messages);
  if (toolConfig) body.toolConfig = toolConfig;
  const additional = additionalFieldsOf(upstreamModel, request.reasoning);
  if (additional) body.additionalModelRequestFields = additional;
  return body;
}
