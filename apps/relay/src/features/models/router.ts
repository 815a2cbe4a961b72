import { Router } from 'express';
import type { ChannelCache, ChannelKind } from '../channels/channel-cache';
import { type AuthContext, authContextOf, authenticate, checkIpAllowed } from '../keys/authenticate';
import type { KeyCache } from '../keys/key-cache';

/** Fixed like new-api's: model entries have no meaningful creation date of their own. */
const MODEL_CREATED = 1_626_777_600;
const OWNER: Record<ChannelKind, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'google' };

/**
 * Models of the key's group's enabled channels, filtered by the key's allow-list, sorted; a client
 * address outside the key's IP allow-list gets 403 like on every other relay route.
 */
function usableModels(channels: ChannelCache, auth: AuthContext, clientIp: string | undefined): [string, Set<ChannelKind>][] {
  checkIpAllowed(auth, clientIp);
  const limits = auth.key.modelLimits;
  return [...channels.modelsFor(auth.group)]
    .filter(([model]) => !limits || limits.has(model))
    .sort(([a], [b]) => a.localeCompare(b));
}

/** `GET /v1/models` (docs/api.md 2.2) and Gemini's `GET /v1beta/models`. */
export function modelsRouter(keys: KeyCache, channels: ChannelCache): Router {
  const router = Router();
  router.get('/v1/models', authenticate(keys, 'openai'), (req, res) => {
    const data = usableModels(channels, authContextOf(res), req.ip).map(([id, kinds]) => {
      // The kind of the first channel listed serving the model (every model has at least one).
      const [firstKind = 'openai'] = kinds;
      return { id, object: 'model', created: MODEL_CREATED, owned_by: OWNER[firstKind] };
    });
    res.json({ object: 'list', data });
  });
  router.get('/v1beta/models', authenticate(keys, 'google'), (req, res) => {
    const models = usableModels(channels, authContextOf(res), req.ip)
      .filter(([, kinds]) => kinds.has('gemini'))
      .map(([id]) => ({
        name: `models/${id}`,
        displayName: id,
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent'],
      }));
    res.json({ models });
  });
  return router;
}
