import { Router } from 'express';
import type { Dialect } from '@modelgate/schemas';
import type { ChannelCache, ModelListing } from '../channels/channel-cache';
import { type AuthContext, authContextOf, authenticate, checkIpAllowed } from '../keys/authenticate';
import type { KeyFailureLimit } from '../keys/failure-limit';
import type { KeyCache } from '../keys/key-cache';

/** Fixed like new-api's: model entries have no meaningful creation date of their own. */
const MODEL_CREATED = 1_626_777_600;
const OWNER: Record<Dialect, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'google' };

/**
 * Models of the key's group's enabled channels, filtered by the key's allow-list, sorted; a client
 * address outside the key's IP allow-list gets 403 like on every other relay route.
 */
function usableModels(channels: ChannelCache, auth: AuthContext, clientIp: string | undefined): [string, ModelListing][] {
  checkIpAllowed(auth, clientIp);
  const limits = auth.key.modelLimits;
  return [...channels.modelsFor(auth.group)]
    .filter(([model]) => !limits || limits.has(model))
    .sort(([a], [b]) => a.localeCompare(b));
}

/**
 * Anthropic's model list (docs/api.md 2.2), for a client that says it speaks Anthropic's API:
 * Claude Code discovers a gateway's models with it (`GET /v1/models?limit=1000`). Everything fits in
 * one page (no `after_id` needed).
 */
function anthropicModelList(models: string[]) {
  const createdAt = new Date(MODEL_CREATED * 1000).toISOString();
  return {
    data: models.map((id) => ({ type: 'model', id, display_name: id, created_at: createdAt })),
    has_more: false,
    first_id: models[0] ?? null,
    last_id: models.at(-1) ?? null,
  };
}

/** `GET /v1/models` (docs/api.md 2.2) and Gemini's `GET /v1beta/models`. */
export function modelsRouter(keys: KeyCache, keyFailures: KeyFailureLimit, channels: ChannelCache): Router {
  const router = Router();
  // The key from `Authorization: Bearer` or Anthropic's `x-api-key`.
  router.get('/v1/models', authenticate(keys, keyFailures, 'anthropic'), (req, res) => {
    const models = usableModels(channels, authContextOf(res), req.ip);
    if (req.headers['anthropic-version'] !== undefined) {
      res.json(anthropicModelList(models.map(([id]) => id)));
      return;
    }
    const data = models.map(([id, { dialects }]) => {
      // The dialect of the first channel listed serving the model (every model has at least one).
      const [firstDialect = 'openai'] = dialects;
      return { id, object: 'model', created: MODEL_CREATED, owned_by: OWNER[firstDialect] };
    });
    res.json({ object: 'list', data });
  });
  router.get('/v1beta/models', authenticate(keys, keyFailures, 'gemini'), (req, res) => {
    const models = usableModels(channels, authContextOf(res), req.ip)
      .filter(([, { surfaces }]) => surfaces.has('gemini'))
      .map(([id]) => ({
        name: `models/${id}`,
        displayName: id,
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent'],
      }));
    res.json({ models });
  });
  return router;
}
