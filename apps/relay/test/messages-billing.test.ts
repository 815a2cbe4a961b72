// docs/api.md 2.5 and 2.9: an agent's long turn (a 120k-token prompt, max_tokens 32000) is served to a
// user whose balance covers what it can cost with at most 10% to spare: the reservation estimates the
// prompt from its size (4 bytes a token), close to what the tokenizer counts for an agent's English.
import { countDeliveredTokens } from '../src/features/relay/tokens';
import { settledConsumeRow } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite } from './harness';
import { ANTHROPIC, anthropicClient, chargeOf, modelOf, withMessagesChannels } from './messages-support';

/**
 * What a coding agent's turn is made of: English instructions and notes, code it read, tool
 * results as JSON. (o200k reads such text at about 4 bytes a token; narrative prose alone at
 * nearer 5, code and JSON alone at 3.5.)
 */
const PIECES = [
  'You are working in the repository `billing-service`. The user asked: "The monthly invoice job sometimes sends two emails to the same customer. Find out why and fix it, then add a test." Read the job first, then the queue worker that runs it, and explain what you find before you change anything.',
  [
    '```ts',
    'export async function runMonthlyInvoices(db: Database, mailer: Mailer): Promise<number> {',
    "  const subscriptions = await db.subscriptions.findMany({ where: { status: 'active' } });",
    '  const byCustomer = groupBy(subscriptions, (s) => s.customerId);',
    '  let sent = 0;',
    '  for (const [customerId, items] of byCustomer) {',
    '    const invoice = await createInvoice(db, customerId, items);',
    '    await mailer.send(invoice.email, renderInvoice(invoice));',
    '    sent += 1;',
    '  }',
    '  return sent;',
    '}',
    '```',
  ].join('\n'),
  'Tool result (read_file `src/queue/worker.ts`, lines 40-62): {"path":"src/queue/worker.ts","content":"  try {\\n    await handler(job.data);\\n    await job.complete();\\n  } catch (err) {\\n    if (job.attempts < 3) await job.retry({ delayMs: 30_000 });\\n    else await job.fail(err);\\n  }"}',
  'The problem is that the loop is not idempotent: if the mailer throws for the fifth customer, the job is retried and the first four customers receive their invoice again. A fix should record which invoices were already sent, for example with a `sent_at` column set in the same transaction as the invoice, and skip the customers whose invoice for the period already has one.',
  'Before the release, please make sure that the documentation describes every option a user can set, with its default value and an example. Reviewers should try the installation steps on a clean machine, because instructions that work on a developer laptop often depend on tools that a new user has never installed.',
  'If the test fails intermittently, do not simply run it again until it passes. Look at what it depends on: the clock, the network, the order in which other tests run, or a shared database. Most flaky tests are telling you something true about the code, and the fix is usually to make the dependency explicit rather than to add a longer timeout.',
];

/** An agent prompt of about `tokens` o200k tokens (4.2 bytes each for these pieces): the pieces in turn, numbered as steps. */
function agentPrompt(tokens: number): string {
  const parts: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < tokens * 4.2; i++) {
    const part = `Step ${i + 1}. ${PIECES[i % PIECES.length]}`;
    parts.push(part);
    bytes += part.length + 2;
  }
  return parts.join('\n\n');
}

const MODEL = modelOf(ANTHROPIC);
const MAX_TOKENS = 32_000;
const PROMPT = agentPrompt(120_000);
/** What the relay's tokenizer counts (what a provider would about charge). */
const PROMPT_TOKENS = countDeliveredTokens([PROMPT]);
/** The most such a call can cost: its whole prompt and every output token it may write. */
const MOST_IT_CAN_COST = chargeOf({ prompt: PROMPT_TOKENS, completion: MAX_TOKENS });

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withMessagesChannels([ANTHROPIC]);
});

/** Streamed, as Claude Code calls (the SDK refuses a call this long unstreamed). */
async function callWith(quota: number) {
  const { key } = await createCustomer(harness.prisma, { quota });
  return anthropicClient(harness, key).messages.stream({ model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
}

it('the prompt is an agent turn of about 120k tokens', () => {
  expect(PROMPT_TOKENS).toBeGreaterThan(115_000);
  expect(PROMPT_TOKENS).toBeLessThan(125_000);
});

it('is served to a user whose balance covers the prompt and 32000 output tokens with 10% to spare', async () => {
  const message = await callWith(Math.ceil(MOST_IT_CAN_COST * 1.1));
  expect(message.stop_reason).toBe('end_turn');
  const row = await settledConsumeRow(harness);
  expect(row.completionTokens).toBeGreaterThan(0);
  await expectLedgerInvariant(harness.prisma);
});

it('is refused (403) to a user who clearly cannot pay for it', async () => {
  await expect(callWith(Math.floor(MOST_IT_CAN_COST * 0.5))).rejects.toMatchObject({ status: 403, type: 'permission_error' });
});
