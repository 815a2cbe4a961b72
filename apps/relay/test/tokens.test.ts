// The reservation estimates prompt tokens from the text's size (no tokenizer in memory); a call the
// upstream does not count is charged the tokenizer's exact count.
import { countTokens as exactTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countDeliveredTokens, countPromptTextTokens, estimateTextTokens } from '../src/features/relay/tokens';

/** Milliseconds `count` takes, and what it returned. */
function timed(count: () => number): { tokens: number; ms: number } {
  const startedAt = performance.now();
  const tokens = count();
  return { tokens, ms: performance.now() - startedAt };
}

const SAMPLES = {
  english: 'The quick brown fox jumps over the lazy dog while the gateway counts every token it relays. '.repeat(20),
  chinese: '网关在每次调用之前预留额度，并在上游返回用量之后按实际用量结算。'.repeat(20),
  code: 'export function add(a: number, b: number): number {\n  return a + b;\n}\n'.repeat(20),
  russian: 'Шлюз резервирует квоту перед каждым вызовом и списывает фактическое использование. '.repeat(20),
  /** What agents send most: tool definitions as JSON. */
  json: JSON.stringify({
    name: 'Bash',
    description: 'Executes a given bash command in a persistent shell session with optional timeout',
    input_schema: { type: 'object', properties: { command: { type: 'string', description: 'The command to execute' } }, required: ['command'] },
  }).repeat(10),
};

const ratio = (text: string) => estimateTextTokens(text) / countPromptTextTokens(text);

describe('prompt token counts', () => {
  // The reservation aims at the likely count, not above it: an agent's 100k-token prompt reserved
  // at 1.4x would refuse users who can pay for it (settlement charges the reported count anyway).
  it.each(['english', 'chinese', 'code', 'json'] as const)('estimates %s text within 25% of the exact count', (sample) => {
    expect(ratio(SAMPLES[sample])).toBeGreaterThanOrEqual(0.8);
    expect(ratio(SAMPLES[sample])).toBeLessThanOrEqual(1.25);
  });

  it('errs high, not low, on scripts of two UTF-8 bytes per letter', () => {
    expect(ratio(SAMPLES.russian)).toBeGreaterThan(1);
  });

  it('counts nothing for an empty prompt', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(countPromptTextTokens('')).toBe(0);
  });
});

describe('delivered text counted without upstream usage', () => {
  it('is the exact count for ordinary text', () => {
    for (const sample of Object.values(SAMPLES)) expect(countDeliveredTokens([sample.slice(0, 900), sample.slice(900)])).toBe(exactTokens(sample));
  });

  it.each([
    ['1 MB without a space', 'A'.repeat(1024 * 1024)],
    ['1 MB of base64', Buffer.alloc(768 * 1024, 'modelgate').toString('base64')],
    ['1 MB of spaces', ' '.repeat(1024 * 1024)],
  ])('costs milliseconds for %s', (_name, text) => {
    countDeliveredTokens(['warm the tokenizer up']);
    const { tokens, ms } = timed(() => countDeliveredTokens([text]));
    // The tokenizer alone took minutes on the run without a space.
    expect(ms).toBeLessThan(250);
    expect(tokens).toBeGreaterThanOrEqual(1024 * 1024 / 64);
  });

  it('charges a text past 16,384 characters at the rate of its start, cut before a space', () => {
    const long = SAMPLES.english.repeat(40);
    const start = long.slice(0, long.lastIndexOf(' ', 16_384));
    expect(countDeliveredTokens([long])).toBe(Math.ceil((exactTokens(start) * long.length) / start.length));
    // Within a percent of the exact count for prose.
    expect(Math.abs(countDeliveredTokens([long]) / exactTokens(long) - 1)).toBeLessThan(0.01);
  });

  it('counts special-token markers as the text they are', () => {
    expect(countDeliveredTokens(['say <|endoftext|> now'])).toBe(exactTokens('say <|endoftext|> now', { disallowedSpecial: new Set() }));
  });
});
