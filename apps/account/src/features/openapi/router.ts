import { Router } from 'express';
import packageJson from '../../../package.json';
import { buildOpenApiDocument } from './document';

/** `GET /api/openapi.json` (public): the document is built once, when the app is created. */
export function createOpenApiRouter(): Router {
  const router = Router();
  const document = buildOpenApiDocument(packageJson.version);
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  return router;
}
