import { isJsonObject } from '../../core/json';
import type { FinishReason } from '../../core/chat';

/** One step of a candidate's output, as the answer and the stream both read it. */
export type OutputPiece =
  | { type: 'reasoning'; text: string }
  /** A thought signature: it closes the reasoning before it (docs/api.md 2.6). */
  | { type: 'signature'; signature: string }
  | { type: 'text'; text: string }
  | { type: 'call'; id: string | undefined; name: string; arguments: string };

/**
 * The pieces of one Gemini part. A thought part's signature follows its text; a signature on any
 * other part (Gemini's place for it: the part after the thoughts) comes first, so the internal form
 * always carries it on reasoning that precedes what it belongs to. Unknown parts (code execution,
 * generated files) are skipped.
 */
function piecesOf(part: unknown): OutputPiece[] {
  if (!isJsonObject(part)) return [];
  const pieces: OutputPiece[] = [];
  const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
  const text = typeof part.text === 'string' ? part.text : '';
  if (part.thought === true) {
    if (text !== '') pieces.push({ type: 'reasoning', text });
    if (signature !== undefined) pieces.push({ type: 'signature', signature });
    return pieces;
  }
  if (signature !== undefined) pieces.push({ type: 'signature', signature });
  const call = part.functionCall;
  if (isJsonObject(call) && typeof call.name === 'string') {
    pieces.push({
      type: 'call',
      id: typeof call.id === 'string' && call.id !== '' ? call.id : undefined,
      name: call.name,
      arguments: JSON.stringify(isJsonObject(call.args) ? call.args : {}),
    });
  } else if (text !== '') {
    pieces.push({ type: 'text', text });
  }
  return pieces;
}

/** A candidate's parts, or none when it has no content (a filtered candidate has none). */
export function partsOfCandidate(candidate: Record<string, unknown>): unknown[] {
  const content = candidate.content;
  return isJsonObject(content) && Array.isArray(content.parts) ? content.parts : [];
}

/** One candidate, as the answer and the stream both read it. */
export interface CandidateOutput {
  /** The choice it is: its `index`, else its place in the list. */
  choice: number;
  pieces: OutputPiece[];
  /** Gemini's `finishReason` as sent (absent until the candidate is done). */
  finishReason: unknown;
}

/** The candidates of a (partial) GenerateContentResponse, in order; undefined when they are malformed. */
export function candidatesOf(response: Record<string, unknown>): CandidateOutput[] | undefined {
  const candidates = response.candidates ?? [];
  if (!Array.isArray(candidates)) return undefined;
  const outputs: CandidateOutput[] = [];
  for (const [position, candidate] of (candidates as unknown[]).entries()) {
    if (!isJsonObject(candidate)) return undefined;
    outputs.push({
      choice: typeof candidate.index === 'number' ? candidate.index : position,
      pieces: partsOfCandidate(candidate).flatMap((part) => piecesOf(part)),
      finishReason: candidate.finishReason,
    });
  }
  return outputs;
}

/** Gemini refused the prompt itself: no candidates, a `promptFeedback.blockReason` instead. */
export function promptBlocked(response: Record<string, unknown>): boolean {
  return isJsonObject(response.promptFeedback) && response.promptFeedback.blockReason !== undefined;
}

/** Gemini's reasons for withholding output. */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** docs/api.md 2.6: STOP -> stop (tool_calls after a function call), MAX_TOKENS -> length, safety -> content_filter. */
export function finishReasonOf(reason: unknown, calledTool: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  if (calledTool && (reason === 'STOP' || reason === undefined)) return 'tool_calls';
  return 'stop';
}

/** The id of a function call Gemini gave none: unique within the answer. */
export function generatedCallId(responseId: string, index: number): string {
  return `call_${responseId}_${index}`;
}

/** The answer's id: Gemini's `responseId`, undefined when it sent none. */
export function responseIdOf(response: Record<string, unknown>): string | undefined {
  return typeof response.responseId === 'string' && response.responseId !== '' ? response.responseId : undefined;
}
