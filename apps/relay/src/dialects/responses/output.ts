import { type AppError, toOpenAI } from '@modelgate/errors';
import type { ResponsesBody } from './request';
import type { ChatUsage, ContentPart, FinishReason } from '../../core/chat';
import { encryptedContentOf, type ReasoningPart } from './reasoning';
import { inputOfArguments } from './custom-tools';

/*
 * The Responses `response` object and its output items (docs/api.md 2.10), built the same way for
 * a whole answer and for the events of a stream, so that a client sees the same response both ways.
 */

/** The internal parts one output item is made of, in the making while a stream goes on. */
export type OutputSource =
  | { type: 'reasoning'; part: ReasoningPart }
  | { type: 'message'; text: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string }
  | { type: 'custom_tool_call'; callId: string; name: string; input: string };

/**
 * Adds one answer part to the output, in answer order: text joins the message just before it,
 * reasoning the unsigned reasoning just before it (a signature ends a reasoning item, as it ends a
 * thinking block), anything else starts an item; a call of one of `customTools` is a custom tool
 * call. A stream adds its pieces one by one (a signature alone as empty reasoning) and gets the
 * items of the whole answer. Returns the item started, or undefined when the part joined the last
 * one or has no output form (empty text, media).
 */
export function appendToOutput(output: OutputSource[], part: ContentPart, customTools: ReadonlySet<string>): OutputSource | undefined {
  const last = output.at(-1);
  let started: OutputSource;
  switch (part.type) {
    case 'text':
      if (part.text === '') return undefined;
      if (last?.type === 'message') {
        last.text += part.text;
        return undefined;
      }
      started = { type: 'message', text: part.text };
      break;
    case 'reasoning':
      if (last?.type === 'reasoning' && last.part.type === 'reasoning' && last.part.signature === undefined) {
        last.part = { ...part, text: last.part.text + part.text };
        return undefined;
      }
      started = { type: 'reasoning', part };
      break;
    case 'redacted_reasoning':
      started = { type: 'reasoning', part };
      break;
    case 'tool_call':
      started = customTools.has(part.name)
        ? { type: 'custom_tool_call', callId: part.id, name: part.name, input: inputOfArguments(part.arguments) }
        : { type: 'function_call', callId: part.id, name: part.name, arguments: part.arguments };
      break;
    default:
      return undefined;
  }
  output.push(started);
  return started;
}

/** The output of a whole answer. */
export function outputOf(content: ContentPart[], customTools: ReadonlySet<string>): OutputSource[] {
  const output: OutputSource[] = [];
  for (const part of content) appendToOutput(output, part, customTools);
  return output;
}

const RESPONSE_ID_PREFIX = 'resp_';

/** The id a Responses client sees: OpenAI's form, the provider's id for the answer kept inside it. */
export function responseIdOf(providerId: string): string {
  return providerId.startsWith(RESPONSE_ID_PREFIX) ? providerId : `${RESPONSE_ID_PREFIX}${providerId}`;
}

const ITEM_ID_PREFIXES: Record<OutputSource['type'], string> = { reasoning: 'rs', message: 'msg', function_call: 'fc', custom_tool_call: 'ctc' };

/** An item's id: OpenAI's prefix for its type, then the response's id and its place in the output. */
export function outputItemId(source: OutputSource, responseId: string, index: number): string {
  return `${ITEM_ID_PREFIXES[source.type]}_${responseId.slice(RESPONSE_ID_PREFIX.length)}_${index}`;
}

type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** `reasoning.encrypted_content` asked for in `include`: reasoning items then carry it. */
export function includesEncryptedReasoning(body: ResponsesBody): boolean {
  return body.include?.includes('reasoning.encrypted_content') === true;
}

/** The text of a reasoning item's summary (OpenAI's place for reasoning other providers show in full). */
export function reasoningText(part: ReasoningPart): string {
  return part.type === 'reasoning' ? part.text : '';
}

/** An output item. Reasoning items carry no status, as OpenAI's do not. */
export function outputItemOf(source: OutputSource, id: string, status: ItemStatus, withEncrypted: boolean): Record<string, unknown> {
  switch (source.type) {
    case 'reasoning': {
      const text = reasoningText(source.part);
      const item: Record<string, unknown> = { id, type: 'reasoning', summary: text === '' ? [] : [summaryPartOf(text)] };
      const encrypted = withEncrypted ? encryptedContentOf(source.part) : undefined;
      if (encrypted !== undefined) item.encrypted_content = encrypted;
      return item;
    }
    case 'message':
      return { id, type: 'message', status, role: 'assistant', content: [outputTextOf(source.text)] };
    case 'function_call':
      return { id, type: 'function_call', status, arguments: source.arguments, call_id: source.callId, name: source.name };
    case 'custom_tool_call':
      return { id, type: 'custom_tool_call', status, call_id: source.callId, input: source.input, name: source.name };
  }
}

/** An item as `response.output_item.added` announces it: nothing generated yet. */
export function startedItemOf(source: OutputSource, id: string): Record<string, unknown> {
  switch (source.type) {
    case 'reasoning':
      return outputItemOf({ type: 'reasoning', part: { type: 'reasoning', text: '' } }, id, 'in_progress', false);
    case 'message':
      return { ...outputItemOf(source, id, 'in_progress', false), content: [] };
    case 'function_call':
      return outputItemOf({ ...source, arguments: '' }, id, 'in_progress', false);
    case 'custom_tool_call':
      return outputItemOf({ ...source, input: '' }, id, 'in_progress', false);
  }
}

/** A reasoning summary part. */
export function summaryPartOf(text: string): Record<string, unknown> {
  return { type: 'summary_text', text };
}

/** A message's text part. */
export function outputTextOf(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

/** Why an answer stopped short, as `incomplete_details.reason`; other finish reasons complete it. */
const INCOMPLETE_REASONS: Partial<Record<FinishReason, string>> = { length: 'max_output_tokens', content_filter: 'content_filter' };

/**
 * The status of the item at `index` once the response ended: the last item of a response that
 * stopped short (or failed) is `incomplete`, every other one `completed`.
 */
function endedItemStatus(index: number, outputLength: number, complete: boolean): ItemStatus {
  return !complete && index === outputLength - 1 ? 'incomplete' : 'completed';
}

/** Responses `usage` of internal counts; cache writes are input tokens (docs/api.md 2.6). */
export function usageToResponses(usage: ChatUsage): Record<string, unknown> {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens, cache_write_tokens: usage.cacheWriteTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** The function and custom tools the model was offered, in OpenAI's echo of them (a custom tool as sent). */
function toolsEcho(body: ResponsesBody): Record<string, unknown>[] {
  return (body.tools ?? []).flatMap((tool) => {
    if (tool.type === 'custom') return [tool];
    return tool.type === 'function'
      ? [{ type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null }]
      : [];
  });
}

/** A failed response's `error.message`: the OpenAI error body's (docs/api.md 1.3), ending with the request id. */
export function failureMessageOf(error: AppError, requestId: string): string {
  return (toOpenAI(error, requestId).body as { error: { message: string } }).error.message;
}

/** How a response stands: being generated, ended (normally or short), or failed. */
export type ResponseOutcome =
  | { status: 'in_progress' }
  | { status: 'ended'; finishReason: FinishReason; usage: ChatUsage }
  | { status: 'failed'; message: string };

export interface ResponseSnapshot {
  id: string;
  /** Epoch seconds. */
  createdAt: number;
  output: OutputSource[];
  outcome: ResponseOutcome;
}

function statusOf(outcome: ResponseOutcome): { status: string; incompleteReason?: string } {
  if (outcome.status !== 'ended') return { status: outcome.status };
  const incompleteReason = INCOMPLETE_REASONS[outcome.finishReason];
  return incompleteReason === undefined ? { status: 'completed' } : { status: 'incomplete', incompleteReason };
}

/**
 * The `response` object (docs/api.md 2.10): the whole answer's, and the one the stream's
 * lifecycle events carry. The request's parameters are echoed as OpenAI echoes them; nothing is
 * stored (`store: false`).
 */
export function responseObjectOf(body: ResponsesBody, snapshot: ResponseSnapshot): Record<string, unknown> {
  const { outcome } = snapshot;
  const { status, incompleteReason } = statusOf(outcome);
  const withEncrypted = includesEncryptedReasoning(body);
  const output =
    outcome.status === 'in_progress'
      ? []
      : snapshot.output.map((source, index) =>
          outputItemOf(
            source,
            outputItemId(source, snapshot.id, index),
            endedItemStatus(index, snapshot.output.length, status === 'completed'),
            withEncrypted,
          ),
        );
  return {
    id: snapshot.id,
    object: 'response',
    created_at: snapshot.createdAt,
    status,
    background: false,
    error: outcome.status === 'failed' ? { code: 'server_error', message: outcome.message } : null,
    incomplete_details: incompleteReason === undefined ? null : { reason: incompleteReason },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    store: false,
    temperature: body.temperature ?? null,
    text: { ...body.text, format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: toolsEcho(body),
    top_p: body.top_p ?? null,
    truncation: body.truncation ?? 'disabled',
    usage: outcome.status === 'ended' ? usageToResponses(outcome.usage) : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}
