/**
 * The internal chat form (docs/api.md 2.6): what every dialect's chat request, answer and stream
 * is translated into and out of. Each provider folder converts between it and its own wire
 * format; a call whose client and channel speak the same dialect never goes through it.
 */

/** An image as a URL: `data:<type>;base64,<data>` or http(s). */
export interface ImageSource {
  kind: 'url';
  url: string;
}

/** An image carried inline. */
export interface InlineImageSource {
  kind: 'base64';
  mediaType: string;
  data: string;
}

/**
 * Provider-specific marks a part carries through a round trip in its own dialect (Anthropic
 * `cache_control`): opaque to other dialects, dropped there.
 */
export type PartExtras = Record<string, unknown>;

export type ContentPart =
  | { type: 'text'; text: string; extras?: PartExtras }
  | { type: 'image'; source: ImageSource | InlineImageSource; detail?: string; extras?: PartExtras }
  | { type: 'audio'; format: string; data: string }
  /** A document (PDF or text) inline or by URL. */
  | { type: 'file'; source: ImageSource | InlineImageSource; name?: string; extras?: PartExtras }
  /** Model reasoning: Anthropic `thinking` (with its `signature`), Gemini thought parts, OpenAI `reasoning_content`. */
  | { type: 'reasoning'; text: string; signature?: string }
  /** Anthropic `redacted_thinking`: encrypted reasoning that must be sent back as it came. */
  | { type: 'redacted_reasoning'; data: string }
  /** A call the assistant made; `arguments` is JSON text. */
  | { type: 'tool_call'; id: string; name: string; arguments: string; extras?: PartExtras }
  /** The result of a tool call, sent back by the client. */
  | { type: 'tool_result'; toolCallId: string; content: ContentPart[]; isError?: boolean; extras?: PartExtras };

export type ChatRole = 'user' | 'assistant' | 'tool';

/**
 * One turn. System and developer messages are not turns: they are `ChatRequest.system`. A `tool`
 * message holds `tool_result` parts only.
 */
export interface ChatMessage {
  role: ChatRole;
  content: ContentPart[];
  /** OpenAI's optional participant name. */
  name?: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
  extras?: PartExtras;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; name?: string; schema: Record<string, unknown>; strict?: boolean };

export interface ReasoningRequest {
  /** OpenAI `reasoning_effort`. */
  effort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Anthropic `thinking.budget_tokens` / Gemini `thinkingBudget`. */
  budgetTokens?: number;
}

export interface ChatRequest {
  /** The model the client asked for (the upstream one is given to the provider apart). */
  model: string;
  /** System and developer instructions in order (text parts). */
  system: ContentPart[];
  messages: ChatMessage[];
  /** Output token limit; undefined when the client set none. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** Choices wanted (1 when absent). */
  n?: number;
  seed?: number;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningRequest;
  stream: boolean;
  /** End-user id, for providers that accept one. */
  user?: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * Token counts as billed (docs/api.md 2.6, 2.11): `promptTokens` includes cached and cache-write
 * tokens; `completionTokens` includes reasoning tokens.
 */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache. */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (Anthropic `cache_creation_input_tokens`). */
  cacheWriteTokens: number;
  /** Completion tokens spent on reasoning. */
  reasoningTokens: number;
  /** Calls of server tools the provider ran and reported (docs/api.md 2.14); absent when none. */
  serverToolCalls?: ServerToolCalls;
}

/** Server tool (its ToolPrice name) -> calls the provider reported. */
export type ServerToolCalls = Record<string, number>;

export interface ChatChoice {
  index: number;
  /** Assistant output in order: reasoning, text and tool calls. */
  content: ContentPart[];
  finishReason: FinishReason;
}

export interface ChatResponse {
  /** The provider's id for the answer. */
  id: string;
  /** Epoch seconds. */
  created: number;
  choices: ChatChoice[];
  /** Undefined when the provider reported no usage (the relay then counts itself). */
  usage?: ChatUsage;
}

/**
 * One step of a streamed answer. A decoder turns each upstream event into zero or more of these as
 * it arrives; an encoder turns each into client bytes at once (nothing is held back).
 */
export type ChatStreamEvent =
  /** The answer began (Anthropic `message_start`, the first OpenAI chunk). */
  | { type: 'start'; id: string; created: number }
  | { type: 'text'; choice: number; text: string }
  | { type: 'reasoning'; choice: number; text: string }
  /** The signature that closes a reasoning block (Anthropic `signature_delta`). */
  | { type: 'reasoning_signature'; choice: number; signature: string }
  | { type: 'redacted_reasoning'; choice: number; data: string }
  /** A tool call begins; `arguments` may already hold all or part of its JSON text. */
  | { type: 'tool_call'; choice: number; index: number; id: string; name: string; arguments: string }
  | { type: 'tool_call_arguments'; choice: number; index: number; arguments: string }
  | { type: 'finish'; choice: number; reason: FinishReason }
  /** Usage so far; later values replace earlier ones field by field. */
  | { type: 'usage'; usage: Partial<ChatUsage> };

export interface EmbeddingRequest {
  model: string;
  /** Strings or token-id arrays, one embedding each. */
  inputs: (string | number[])[];
  dimensions?: number;
}

export interface EmbeddingResponse {
  /** One vector per input, in input order. */
  vectors: number[][];
  /** Undefined when the provider reported none. */
  promptTokens?: number;
}
