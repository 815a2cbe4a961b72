-- CreateTable
CREATE TABLE "usage_buckets" (
    "user_id" INTEGER NOT NULL,
    "bucket" BIGINT NOT NULL,
    "model_name" TEXT NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "quota" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "usage_buckets_pkey" PRIMARY KEY ("user_id","bucket","model_name")
);

-- CreateIndex
CREATE INDEX "usage_buckets_bucket_idx" ON "usage_buckets"("bucket");

-- AddForeignKey
ALTER TABLE "usage_buckets" ADD CONSTRAINT "usage_buckets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill: the consume rows (type 2) written before this table existed, summed once here.
INSERT INTO "usage_buckets" ("user_id", "bucket", "model_name", "requests", "prompt_tokens", "completion_tokens", "quota")
SELECT "user_id", floor(extract(epoch FROM "created_at") / 3600)::bigint * 3600, "model_name",
       count(*), sum("prompt_tokens"), sum("completion_tokens"), -sum("quota")
  FROM "logs"
 WHERE "type" = 2
 GROUP BY 1, 2, 3;
