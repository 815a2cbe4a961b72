-- AlterTable
ALTER TABLE "channels" ADD COLUMN     "settings" JSONB NOT NULL DEFAULT '{}';
