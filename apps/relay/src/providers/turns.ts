import type { ChatMessage } from '../core/chat';

/** One side's turn: the assistant's, or the user's (tool results included). */
export interface SideTurn<Item> {
  assistant: boolean;
  items: Item[];
}

/**
 * The conversation as providers that require strictly alternating turns take it (Anthropic,
 * Gemini): tool messages belong to the user's side, consecutive turns of one side are merged in
 * order (a tool message per result, then the user's next words), and turns left without an item
 * are skipped. `itemsOf` is called once per message, in order.
 */
export function alternatingTurns<Item>(messages: ChatMessage[], itemsOf: (message: ChatMessage) => Item[]): SideTurn<Item>[] {
  const turns: SideTurn<Item>[] = [];
  for (const message of messages) {
    const items = itemsOf(message);
    if (items.length === 0) continue;
    const assistant = message.role === 'assistant';
    const previous = turns.at(-1);
    if (previous?.assistant === assistant) previous.items.push(...items);
    else turns.push({ assistant, items });
  }
  return turns;
}
