import { z } from 'zod';

/**
 * The relay's internal channel test (docs/api.md 3.3): the account service asks, the relay sends
 * one small chat request through the channel's provider (its own signing and token exchange).
 */
export const CHANNEL_TEST_PATH = '/internal/channel-test';

export const channelTestRequestSchema = z.object({
  channel_id: z.number().int().positive(),
  /** The model as admins name it; the relay applies the channel's mapping. */
  model: z.string().min(1).max(200),
});
export type ChannelTestRequest = z.infer<typeof channelTestRequestSchema>;

export const channelTestResultSchema = z.object({
  success: z.boolean(),
  /** '' on success; else the upstream's words (the key masked) or why no answer came. */
  message: z.string(),
  time_ms: z.number().int().nonnegative(),
});
export type ChannelTestResult = z.infer<typeof channelTestResultSchema>;
