import { z } from 'zod';
import { channelTestResultSchema } from '../channel-test';
import { CHANNEL_TYPE_NUMBERS } from '../channel-types';
import { CHANNEL_STATUS, parseModelMapping } from '../domain';
import { isReservedName, RESERVED_NAME_MESSAGE } from '../names';
import { commaList, groupSchema, idField, idPathParams, modelNameSchema, noData, pageQuery, pageSchema, unixTime } from './common';
import type { ApiOperation } from './operation';

const baseUrl = z
  .string()
  .max(2048)
  .refine((text) => text === '' || /^https?:\/\/[^\s]+$/.test(text) && URL.canParse(text), 'must be an http(s) URL')
  .transform((text) => text.replace(/\/+$/, ''));

/** A JSON object (requested -> upstream model) or its JSON text; stored as text, '' for none. */
const modelMapping = z
  .unknown()
  .describe('a JSON object, requested model -> upstream model, or its JSON text')
  .transform((value, ctx) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    if (text.length > 20_000) {
      ctx.addIssue({ code: 'custom', message: 'must be at most 20000 characters of JSON' });
      return z.NEVER;
    }
    let mapping: Map<string, string>;
    try {
      mapping = parseModelMapping(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
    const reserved = [...mapping].flat().find(isReservedName);
    if (reserved !== undefined) {
      ctx.addIssue({ code: 'custom', message: `model ${JSON.stringify(reserved)} ${RESERVED_NAME_MESSAGE}` });
      return z.NEVER;
    }
    return mapping.size ? JSON.stringify(Object.fromEntries(mapping)) : '';
  });

const channelFields = {
  name: z.string().trim().min(1).max(100),
  type: z.literal(CHANNEL_TYPE_NUMBERS),
  key: z.string().trim().min(1).max(10_000),
  base_url: baseUrl,
  models: commaList(modelNameSchema, 'model'),
  groups: commaList(groupSchema, 'group'),
  priority: z.number().int().min(-1_000_000).max(1_000_000),
  weight: z.number().int().min(0).max(1_000_000),
  model_mapping: modelMapping,
  auto_ban: z.boolean(),
  status: z.union([z.literal(CHANNEL_STATUS.enabled), z.literal(CHANNEL_STATUS.manuallyDisabled)]),
  /** A JSON object, checked against the channel's type by the service (docs/api.md 3.3). */
  settings: z.unknown().describe('a JSON object of the settings the channel type declares'),
};

export const channelCreateBody = z
  .object(channelFields)
  .partial({ base_url: true, groups: true, priority: true, weight: true, model_mapping: true, auto_ban: true, status: true, settings: true })
  .strict();
export const channelUpdateBody = z.object(channelFields).partial().extend({ id: idField }).strict();
export const channelBatchDeleteBody = z.object({ ids: z.array(idField).min(1).max(1000) }).strict();
export const channelTestQuery = z.object({ model: z.string().max(200).optional() });

/** A channel as admins see it: everything but the key. */
export const channelViewSchema = z.object({
  id: z.number().int(),
  type: z.number().int(),
  name: z.string(),
  base_url: z.string(),
  models: z.string(),
  groups: z.string(),
  priority: z.number().int(),
  weight: z.number().int(),
  model_mapping: z.string(),
  status: z.number().int(),
  status_reason: z.string(),
  status_changed_at: unixTime.nullable(),
  auto_ban: z.boolean(),
  /** The type's settings, a JSON object (docs/api.md 3.3). */
  settings: z.record(z.string(), z.unknown()),
  used_quota: z.number().int(),
  response_time_ms: z.number().int(),
  tested_at: unixTime.nullable(),
  created_at: unixTime,
});
export type ChannelView = z.output<typeof channelViewSchema>;

/** docs/api.md 3.3 channels (role >= 10). Responses never carry the channel key. */
export const channelOperations = [
  { method: 'post', path: '/api/channel', auth: 'admin', summary: 'Create a channel', body: channelCreateBody, response: channelViewSchema },
  { method: 'get', path: '/api/channel', auth: 'admin', summary: 'List channels', query: pageQuery, response: pageSchema(channelViewSchema) },
  {
    method: 'post',
    path: '/api/channel/batch',
    auth: 'admin',
    summary: 'Delete several channels: the number deleted',
    body: channelBatchDeleteBody,
    response: z.number().int(),
  },
  {
    method: 'get',
    path: '/api/channel/test/:id',
    auth: 'admin',
    summary: 'Send one minimal request through the channel',
    params: idPathParams,
    query: channelTestQuery,
    response: channelTestResultSchema,
  },
  { method: 'get', path: '/api/channel/:id', auth: 'admin', summary: 'One channel', params: idPathParams, response: channelViewSchema },
  { method: 'put', path: '/api/channel', auth: 'admin', summary: 'Edit a channel', body: channelUpdateBody, response: channelViewSchema },
  { method: 'delete', path: '/api/channel/:id', auth: 'admin', summary: 'Delete a channel', params: idPathParams, response: noData },
] as const satisfies readonly ApiOperation[];
