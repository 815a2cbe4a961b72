-- Written by hand (Prisma cannot express CHECK constraints): a charge is never cut to fit the
-- balance (docs/api.md 2.5), so the excess over the reservation may take a user's quota and a limited
-- key's remain_quota below zero (a debt). Debits the account service and the worker book still
-- refuse to go below zero (changeBalance), and the other counters stay non-negative.
ALTER TABLE "users" DROP CONSTRAINT "users_quota_non_negative";
ALTER TABLE "tokens" DROP CONSTRAINT "tokens_remain_quota_non_negative";
