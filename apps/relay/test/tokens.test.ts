// The reservation estimates prompt tokens from the text's size (no tokenizer in memory); a call the
// upstream does not count is charged the tokenizer's exact count.
import { countPromptTextTokens, estimateTextTokens } from '../src/features/relay/tokens';

const SAMPLES = {
  english: 'The quick brown fox jumps over the lazy dog while the gateway counts every token it relays. '.repeat(20),
  chinese: '网关在每次调用之前预留额度，并在上游返回用量之后按实际用量结算。'.repeat(20),
  code: 'export function add(a: number, b: number): number {\n  return a + b;\n}\n'.repeat(20),
  russian: 'Шлюз резервирует квоту перед каждым вызовом и списывает фактическое использование. '.repeat(20),
};

describe('prompt token counts', () => {
  it.each(Object.entries(SAMPLES))('reserves at least the exact count for %s text', (_, text) => {
    const exact = countPromptTextTokens(text);
    expect(exact).toBeGreaterThan(0);
    expect(estimateTextTokens(text)).toBeGreaterThanOrEqual(exact);
  });

  it('counts nothing for an empty prompt', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(countPromptTextTokens('')).toBe(0);
  });
});
