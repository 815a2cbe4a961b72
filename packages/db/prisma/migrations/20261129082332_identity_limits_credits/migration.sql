-- AlterTable
ALTER TABLE "tokens" ADD COLUMN     "budget_period" TEXT NOT NULL DEFAULT 'month',
ADD COLUMN     "budget_period_start" TIMESTAMP(3),
ADD COLUMN     "budget_usd" DECIMAL(14,4),
ADD COLUMN     "budget_used_quota" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "limits_set_by" INTEGER,
ADD COLUMN     "max_concurrency" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "rpm_limit" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "tpm_limit" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "notification_email" TEXT,
ADD COLUMN     "notify_type" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "quota_warning_threshold" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "webhook_secret_enc" TEXT,
ADD COLUMN     "webhook_url" TEXT;

-- CreateTable
CREATE TABLE "user_identities" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_identities_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "redemptions" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "code_prefix" TEXT NOT NULL,
    "quota" BIGINT NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 1,
    "created_by" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3),
    "redeemed_by" INTEGER,
    "redeemed_at" TIMESTAMP(3),

    CONSTRAINT "redemptions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "user_identities_user_id_idx" ON "user_identities"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_identities_issuer_subject_key" ON "user_identities"("issuer", "subject");

-- CreateIndex
CREATE UNIQUE INDEX "redemptions_code_hash_key" ON "redemptions"("code_hash");

-- CreateIndex
CREATE INDEX "redemptions_status_created_at_idx" ON "redemptions"("status", "created_at");

-- AddForeignKey
ALTER TABLE "user_identities" ADD CONSTRAINT "user_identities_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand (Prisma cannot express CHECK constraints).
ALTER TABLE "tokens" ADD CONSTRAINT "tokens_budget_period_known" CHECK ("budget_period" IN ('day', 'week', 'month'));
ALTER TABLE "tokens" ADD CONSTRAINT "tokens_limits_non_negative" CHECK ("rpm_limit" >= 0 AND "tpm_limit" >= 0 AND "max_concurrency" >= 0 AND ("budget_usd" IS NULL OR "budget_usd" >= 0));
ALTER TABLE "users" ADD CONSTRAINT "users_notify_type_known" CHECK ("notify_type" IN ('', 'email', 'webhook'));
ALTER TABLE "redemptions" ADD CONSTRAINT "redemptions_quota_positive" CHECK ("quota" > 0);
