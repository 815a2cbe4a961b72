import type { FinishReason } from '../../core/chat';

/** Each internal finish reason as the Anthropic stop reason a client of the Messages API gets (docs/api.md 2.6). */
const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

/**
 * Anthropic's stop reasons read back: the four above, and those that have no internal reason of
 * their own. `pause_turn` (a long server-tool turn paused) ends this answer like a stop.
 */
const FINISH_REASONS = new Map<string, FinishReason>([
  ...Object.entries(STOP_REASONS).map(([finish, stop]) => [stop, finish as FinishReason] as const),
  ['stop_sequence', 'stop'],
  ['pause_turn', 'stop'],
  ['model_context_window_exceeded', 'length'],
]);

/** An upstream stop reason in internal terms; a reason added later maps to `stop`. */
export function finishReasonOf(stopReason: string): FinishReason {
  return FINISH_REASONS.get(stopReason) ?? 'stop';
}

/** An internal finish reason as Anthropic's stop reason. */
export function stopReasonOf(finish: FinishReason): string {
  return STOP_REASONS[finish];
}
