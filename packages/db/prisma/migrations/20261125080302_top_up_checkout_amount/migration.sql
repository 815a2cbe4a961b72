-- AlterTable
ALTER TABLE "top_ups" ADD COLUMN     "failure_reason" TEXT,
ADD COLUMN     "provider_amount" BIGINT,
ADD COLUMN     "provider_currency" TEXT;

-- Written by hand (Prisma cannot express CHECK constraints): an amount the provider answered is never negative.
ALTER TABLE "top_ups" ADD CONSTRAINT "top_ups_provider_amount_non_negative" CHECK ("provider_amount" >= 0);
