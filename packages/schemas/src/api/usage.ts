import { z } from 'zod';
import { unixTime, unixTimeParam } from './common';
import type { ApiOperation } from './operation';

/** Bucket widths of the usage reports: an hour or a UTC day. */
export const USAGE_GRANULARITIES = ['hour', 'day'] as const;

/** The query of the usage reports (docs/api.md 3.7); the service widens the range to whole buckets. */
export const usageQuery = z.object({
  start_timestamp: unixTimeParam.optional(),
  end_timestamp: unixTimeParam.optional(),
  granularity: z.enum(USAGE_GRANULARITIES).default('day'),
});
export const adminUsageQuery = usageQuery.extend({ username: z.string().max(20).optional(), model_name: z.string().max(200).optional() });

export const usageItemSchema = z.object({
  /** Unix seconds: start of the bucket. */
  bucket: z.number().int(),
  model_name: z.string(),
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  quota: z.number().int(),
});
export type UsageItem = z.output<typeof usageItemSchema>;
export const adminUsageItemSchema = usageItemSchema.extend({ username: z.string() });
export type AdminUsageItem = z.output<typeof adminUsageItemSchema>;

const usageReport = <T extends z.ZodType>(item: T) =>
  z.object({ granularity: z.enum(USAGE_GRANULARITIES), start_timestamp: unixTime, end_timestamp: unixTime, items: z.array(item) });
export const usageReportSchema = usageReport(usageItemSchema);
export const adminUsageReportSchema = usageReport(adminUsageItemSchema);

/** docs/api.md 3.7: own usage (any user) and everyone's (admins), per bucket and model. */
export const usageOperations = [
  { method: 'get', path: '/api/data/self', auth: 'user', summary: 'The caller\'s usage per bucket and model', query: usageQuery, response: usageReportSchema },
  {
    method: 'get',
    path: '/api/data',
    auth: 'admin',
    summary: 'Everyone\'s usage per bucket, model and user',
    query: adminUsageQuery,
    response: adminUsageReportSchema,
  },
] as const satisfies readonly ApiOperation[];
