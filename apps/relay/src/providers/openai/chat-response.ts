import { randomUUID } from 'node:crypto';
import { UpstreamFailure } from '../../features/upstream/client';
import type { ChatChoice, ChatResponse, ContentPart, FinishReason } from '../../core/chat';
import { isJsonObject } from '../../core/json';
import { nowSeconds } from '../../core/time';
import { usageFromOpenAI } from './usage';

const COMPLETION_ID_PREFIX = 'chatcmpl-';

/** The id a chat client sees: OpenAI's form, the provider's own id kept inside it. */
export function chatCompletionId(providerId: string): string {
  return providerId.startsWith(COMPLETION_ID_PREFIX) ? providerId : `${COMPLETION_ID_PREFIX}${providerId}`;
}

/** The provider's id for an answer, or a fresh one when it sent none. */
export function upstreamIdOf(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value : `${COMPLETION_ID_PREFIX}${randomUUID()}`;
}

/** Epoch seconds as the provider stated them, or now. */
export function createdOf(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : nowSeconds();
}

const FINISH_REASONS = new Map<string, FinishReason>([
  ['stop', 'stop'],
  ['length', 'length'],
  ['tool_calls', 'tool_calls'],
  // The legacy single function call.
  ['function_call', 'tool_calls'],
  ['content_filter', 'content_filter'],
]);

/** An OpenAI finish reason in internal terms; reasons other servers invent end the answer normally. */
export function finishReasonFromOpenAI(reason: string): FinishReason {
  return FINISH_REASONS.get(reason) ?? 'stop';
}

function malformed(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with a malformed chat completion');
}

/** `reasoning_content` (DeepSeek, and most servers) or `reasoning` (OpenRouter, recent vLLM). */
export function reasoningOf(message: Record<string, unknown>): string | undefined {
  const text = typeof message.reasoning_content === 'string' ? message.reasoning_content : message.reasoning;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

function toolCallPart(call: unknown): ContentPart | undefined {
  if (!isJsonObject(call) || !isJsonObject(call.function)) {
    // A custom (free-form) tool call has no counterpart in the internal form.
    if (isJsonObject(call) && call.type === 'custom') return undefined;
    throw malformed();
  }
  const { id, function: fn } = call;
  if (typeof id !== 'string' || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') throw malformed();
  return { type: 'tool_call', id, name: fn.name, arguments: fn.arguments };
}

function choiceFromOpenAI(choice: unknown, position: number): ChatChoice {
  if (!isJsonObject(choice) || !isJsonObject(choice.message)) throw malformed();
  const message = choice.message;
  const content: ContentPart[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) content.push({ type: 'reasoning', text: reasoning });
  for (const text of [message.content, message.refusal]) {
    if (typeof text === 'string') {
      if (text !== '') content.push({ type: 'text', text });
    } else if (text !== null && text !== undefined) {
      throw malformed();
    }
  }
  const toolCalls = message.tool_calls ?? [];
  if (!Array.isArray(toolCalls)) throw malformed();
  for (const call of toolCalls) {
    const part = toolCallPart(call);
    if (part) content.push(part);
  }
  return {
    index: typeof choice.index === 'number' && Number.isInteger(choice.index) ? choice.index : position,
    content,
    finishReason: typeof choice.finish_reason === 'string' ? finishReasonFromOpenAI(choice.finish_reason) : 'stop',
  };
}

/** A `chat.completion` in the internal form; UpstreamFailure('other') when the body is not one. */
export function chatResponseFromOpenAI(body: unknown): ChatResponse {
  if (!isJsonObject(body) || !Array.isArray(body.choices)) throw malformed();
  return {
    id: upstreamIdOf(body.id),
    created: createdOf(body.created),
    choices: body.choices.map(choiceFromOpenAI),
    usage: usageFromOpenAI(body.usage),
  };
}

/**
 * An assistant turn as an OpenAI message: text joined (null when the turn is only tool calls),
 * reasoning as DeepSeek-style `reasoning_content`, tool calls with their ids. Redacted reasoning
 * has no OpenAI form and is dropped.
 */
export function assistantMessageToOpenAI(parts: ContentPart[]): Record<string, unknown> {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Record<string, unknown>[] = [];
  for (const part of parts) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'reasoning') reasoning.push(part.text);
    else if (part.type === 'tool_call') toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: texts.length === 0 && toolCalls.length > 0 ? null : texts.join(''),
  };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}
