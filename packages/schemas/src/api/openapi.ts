import { z } from 'zod';
import type { ApiOperation } from './operation';

/** `GET /api/openapi.json`: this table as an OpenAPI 3.1 document (docs/api.md 3). */
export const openApiOperations = [
  {
    method: 'get',
    path: '/api/openapi.json',
    auth: 'public',
    summary: '`/api` and the relay surfaces as an OpenAPI 3.1 document',
    response: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()) }),
    raw: 'application/json',
  },
] as const satisfies readonly ApiOperation[];
