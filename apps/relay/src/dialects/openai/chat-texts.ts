/** Pieces an OpenAI chat message or delta generated: content, reasoning, tool names and arguments. */
function messagePieces(message: unknown, into: string[]): void {
  if (message === null || typeof message !== 'object') return;
  const { content, reasoning_content: reasoning, tool_calls: toolCalls } = message as Record<string, unknown>;
  if (typeof content === 'string' && content.length > 0) into.push(content);
  if (typeof reasoning === 'string' && reasoning.length > 0) into.push(reasoning);
  if (!Array.isArray(toolCalls)) return;
  for (const call of toolCalls) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof fn?.name === 'string') into.push(fn.name);
    if (typeof fn?.arguments === 'string') into.push(fn.arguments);
  }
}

/**
 * What the `choices` of a chat completion (`message`) or chunk (`delta`) generated, for counting
 * when the upstream sent no usage.
 */
export function chatChoiceTexts(choices: unknown, into: string[]): void {
  if (!Array.isArray(choices)) return;
  for (const choice of choices) {
    const { message, delta } = (choice ?? {}) as { message?: unknown; delta?: unknown };
    messagePieces(message ?? delta, into);
  }
}
