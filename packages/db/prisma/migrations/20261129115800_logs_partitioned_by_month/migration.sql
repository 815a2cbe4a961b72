-- `logs` becomes partitioned by month of `created_at` (UTC wall time, as every writer stores it), so
-- LogRetentionDays can drop whole months instead of deleting rows. The whole script runs in one
-- transaction: the old table is copied row for row into the new one, then dropped.

-- The old table and its objects step aside; their names go to the partitioned table.
ALTER TABLE "logs" RENAME TO "logs_unpartitioned";
ALTER TABLE "logs_unpartitioned" RENAME CONSTRAINT "logs_pkey" TO "logs_unpartitioned_pkey";
ALTER TABLE "logs_unpartitioned" RENAME CONSTRAINT "logs_user_id_fkey" TO "logs_unpartitioned_user_id_fkey";
ALTER INDEX "logs_user_id_created_at_idx" RENAME TO "logs_unpartitioned_user_id_created_at_idx";
ALTER INDEX "logs_created_at_idx" RENAME TO "logs_unpartitioned_created_at_idx";
ALTER INDEX "logs_type_created_at_idx" RENAME TO "logs_unpartitioned_type_created_at_idx";
ALTER INDEX "logs_request_id_idx" RENAME TO "logs_unpartitioned_request_id_idx";

-- A partitioned table's primary key must hold the partition key. Ids keep coming from the same
-- sequence, so they stay unique and keep growing across the conversion.
CREATE TABLE "logs" (
    "id" BIGINT NOT NULL DEFAULT nextval('logs_id_seq'),
    "user_id" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "type" INTEGER NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "username" TEXT NOT NULL DEFAULT '',
    "token_id" INTEGER,
    "token_name" TEXT NOT NULL DEFAULT '',
    "model_name" TEXT NOT NULL DEFAULT '',
    "quota" BIGINT NOT NULL DEFAULT 0,
    "prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "completion_tokens" INTEGER NOT NULL DEFAULT 0,
    "use_time_ms" INTEGER NOT NULL DEFAULT 0,
    "first_byte_ms" INTEGER,
    "is_stream" BOOLEAN NOT NULL DEFAULT false,
    "channel_id" INTEGER,
    "request_id" TEXT,
    "other" JSONB,

    CONSTRAINT "logs_pkey" PRIMARY KEY ("id", "created_at")
) PARTITION BY RANGE ("created_at");
ALTER SEQUENCE "logs_id_seq" OWNED BY "logs"."id";

-- One partition per month (`logs_YYYYMM`), from the oldest row's month to two months ahead; the
-- worker keeps creating them ahead (apps/worker, log-partitions). The DEFAULT partition only takes a
-- row no month partition covers (a clock far ahead, or the worker stopped for months), so no write
-- of the ledger ever fails; the worker moves such rows into their month when it creates it.
CREATE TABLE "logs_default" PARTITION OF "logs" DEFAULT;
DO $$
DECLARE
  month timestamp := date_trunc('month', COALESCE((SELECT min("created_at") FROM "logs_unpartitioned"), now() AT TIME ZONE 'UTC'));
  last_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months';
BEGIN
  WHILE month <= last_month LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "logs" FOR VALUES FROM (%L) TO (%L)',
      'logs_' || to_char(month, 'YYYYMM'), month, month + interval '1 month');
    month := month + interval '1 month';
  END LOOP;
END $$;

INSERT INTO "logs" ("id", "user_id", "created_at", "type", "content", "username", "token_id", "token_name", "model_name",
  "quota", "prompt_tokens", "completion_tokens", "use_time_ms", "first_byte_ms", "is_stream", "channel_id", "request_id", "other")
SELECT "id", "user_id", "created_at", "type", "content", "username", "token_id", "token_name", "model_name",
  "quota", "prompt_tokens", "completion_tokens", "use_time_ms", "first_byte_ms", "is_stream", "channel_id", "request_id", "other"
FROM "logs_unpartitioned";

DROP TABLE "logs_unpartitioned";

-- The same indexes as before, built once after the copy; each partition gets its own.
CREATE INDEX "logs_user_id_created_at_idx" ON "logs"("user_id", "created_at");
CREATE INDEX "logs_created_at_idx" ON "logs"("created_at");
CREATE INDEX "logs_type_created_at_idx" ON "logs"("type", "created_at");
CREATE INDEX "logs_request_id_idx" ON "logs"("request_id");

ALTER TABLE "logs" ADD CONSTRAINT "logs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
