import { pageOf, parseOrThrow } from '@modelgate/http';
import { CHANNEL_STATUS, CHANNEL_TYPE_NUMBERS, isReservedName, parseModelMapping, RESERVED_NAME_MESSAGE, ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { requireUser } from '../auth/require-user';
import { commaList, groupSchema, modelNameSchema } from '../users/fields';
import { createChannel, editChannel, getChannel, listChannels, removeChannel, removeChannels, runChannelTest } from './service';

const baseUrl = z
  .string()
  .max(2048)
  .refine((text) => text === '' || /^https?:\/\/[^\s]+$/.test(text) && URL.canParse(text), 'must be an http(s) URL')
  .transform((text) => text.replace(/\/+$/, ''));

/** A JSON object (requested -> upstream model) or its JSON text; stored as text, '' for none. */
const modelMapping = z.unknown().transform((value, ctx) => {
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
  settings: z.unknown(),
};
const channelId = z.number().int().positive().max(2_147_483_647);

const createBody = z
  .object(channelFields)
  .partial({ base_url: true, groups: true, priority: true, weight: true, model_mapping: true, auto_ban: true, status: true, settings: true })
  .strict();
const updateBody = z.object(channelFields).partial().extend({ id: channelId }).strict();
const batchBody = z.object({ ids: z.array(channelId).min(1).max(1000) }).strict();
const testQuery = z.object({ model: z.string().max(200).optional() });

/** docs/api.md 3.3 channels (role >= 10). Responses never carry the channel key. */
export function createChannelRouter(deps: AccountDeps): Router {
  const router = Router();
  router.use('/channel', requireUser(deps, ROLE.admin));
  router.post('/channel', async (req, res) => {
    sendData(res, await createChannel(deps, parseOrThrow(createBody, req.body)));
  });
  router.get('/channel', async (req, res) => {
    sendData(res, await listChannels(deps, pageOf(req.query)));
  });
  router.post('/channel/batch', async (req, res) => {
    sendData(res, await removeChannels(deps, parseOrThrow(batchBody, req.body).ids));
  });
  router.get('/channel/test/:id', async (req, res) => {
    const { model } = parseOrThrow(testQuery, req.query);
    sendData(res, await runChannelTest(deps, idParam(req.params.id, 'channel'), model));
  });
  router.get('/channel/:id', async (req, res) => {
    sendData(res, await getChannel(deps, idParam(req.params.id, 'channel')));
  });
  router.put('/channel', async (req, res) => {
    const { id, ...fields } = parseOrThrow(updateBody, req.body);
    sendData(res, await editChannel(deps, id, fields));
  });
  router.delete('/channel/:id', async (req, res) => {
    await removeChannel(deps, idParam(req.params.id, 'channel'));
    sendData(res);
  });
  return router;
}
