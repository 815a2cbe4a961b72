import { ledgerMismatches, type PrismaClient } from '@modelgate/db';

const LOG_TYPE_CONSUME = 2;

export interface Check {
  ok: boolean;
  line: string;
}

interface Totals {
  consumeRows: bigint;
  loggedCharges: bigint;
  userUsed: bigint;
  userRequests: bigint;
  tokenUsed: bigint;
}

async function totalsOf(prisma: PrismaClient, userId: number): Promise<Totals> {
  const [row] = await prisma.$queryRaw<Totals[]>`
    SELECT
      (SELECT COUNT(*) FROM logs WHERE user_id = ${userId} AND type = ${LOG_TYPE_CONSUME})::bigint AS "consumeRows",
      (SELECT COALESCE(-SUM(quota), 0) FROM logs WHERE user_id = ${userId} AND type = ${LOG_TYPE_CONSUME})::bigint AS "loggedCharges",
      (SELECT used_quota FROM users WHERE id = ${userId}) AS "userUsed",
      (SELECT request_count FROM users WHERE id = ${userId}) AS "userRequests",
      (SELECT COALESCE(SUM(used_quota), 0) FROM tokens WHERE user_id = ${userId})::bigint AS "tokenUsed"`;
  if (!row) throw new Error('the ledger totals query returned no row');
  return row;
}

/**
 * Waits until every charge is in PostgreSQL: as many consume rows as successful relayed calls (when
 * known), or else no change for a second.
 */
export async function waitForLedger(prisma: PrismaClient, userId: number, expectedRows: number | undefined, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1n;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const { consumeRows } = await totalsOf(prisma, userId);
    if (expectedRows !== undefined && consumeRows >= BigInt(expectedRows)) return;
    if (consumeRows !== last) {
      last = consumeRows;
      stableSince = Date.now();
    } else if (expectedRows === undefined && Date.now() - stableSince > 1_000) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * After the run: the ledger invariant for every user (quota = sum of log deltas), and for the bench
 * user the charged quota seen from every side (users.used_quota, the keys' used_quota, the consume
 * rows) agreeing, with one consume row per successful call.
 */
export async function checkLedger(prisma: PrismaClient, userId: number, successfulCalls: number | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  const mismatches = await ledgerMismatches(prisma);
  checks.push({
    ok: mismatches.length === 0,
    line: mismatches.length === 0
      ? 'ledger invariant: every user quota = sum of its log deltas'
      : `ledger invariant broken for ${mismatches.length} user(s): ${mismatches.slice(0, 5).map((m) => `user ${m.userId} quota ${m.quota} vs logged ${m.logged}`).join('; ')}`,
  });
  const totals = await totalsOf(prisma, userId);
  const agree = totals.userUsed === totals.loggedCharges && totals.tokenUsed === totals.loggedCharges;
  checks.push({
    ok: agree,
    line: `charged quota: users.used_quota ${totals.userUsed}, tokens.used_quota ${totals.tokenUsed}, sum of consume log charges ${totals.loggedCharges}${agree ? ' (agree)' : ' (DIFFER)'}`,
  });
  checks.push({
    ok: totals.userRequests === totals.consumeRows,
    line: `users.request_count ${totals.userRequests} = consume rows ${totals.consumeRows}`,
  });
  if (successfulCalls !== undefined) {
    checks.push({
      ok: totals.consumeRows === BigInt(successfulCalls),
      line: `one consume row per successful call: ${totals.consumeRows} rows for ${successfulCalls} calls`,
    });
  }
  return checks;
}
