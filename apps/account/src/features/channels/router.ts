import { pageOf, parseOrThrow } from '@modelgate/http';
import { channelBatchDeleteBody, channelCreateBody, channelTestQuery, channelUpdateBody, ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { requireUser } from '../auth/require-user';
import { createChannel, editChannel, getChannel, listChannels, removeChannel, removeChannels, runChannelTest } from './service';

/** docs/api.md 3.3 channels (role >= 10). Responses never carry the channel key. */
export function createChannelRouter(deps: AccountDeps): Router {
  const router = Router();
  router.use('/channel', requireUser(deps, ROLE.admin));
  router.post('/channel', async (req, res) => {
    sendData(res, await createChannel(deps, parseOrThrow(channelCreateBody, req.body)));
  });
  router.get('/channel', async (req, res) => {
    sendData(res, await listChannels(deps, pageOf(req.query)));
  });
  router.post('/channel/batch', async (req, res) => {
    sendData(res, await removeChannels(deps, parseOrThrow(channelBatchDeleteBody, req.body).ids));
  });
  router.get('/channel/test/:id', async (req, res) => {
    const { model } = parseOrThrow(channelTestQuery, req.query);
    sendData(res, await runChannelTest(deps, idParam(req.params.id, 'channel'), model));
  });
  router.get('/channel/:id', async (req, res) => {
    sendData(res, await getChannel(deps, idParam(req.params.id, 'channel')));
  });
  router.put('/channel', async (req, res) => {
    const { id, ...fields } = parseOrThrow(channelUpdateBody, req.body);
    sendData(res, await editChannel(deps, id, fields));
  });
  router.delete('/channel/:id', async (req, res) => {
    await removeChannel(deps, idParam(req.params.id, 'channel'));
    sendData(res);
  });
  return router;
}
