import { z } from 'zod';
import type { ApiOperation } from './operation';

export const optionUpdateBody = z.object({ key: z.string().min(1), value: z.unknown() }).strict();

/** Root-only runtime options (docs/api.md 3.4). */
export const optionOperations = [
  {
    method: 'get',
    path: '/api/option',
    auth: 'root',
    summary: 'Every option, values as stored text (secrets masked)',
    response: z.array(z.object({ key: z.string(), value: z.string() })),
  },
  {
    method: 'put',
    path: '/api/option',
    auth: 'root',
    summary: 'Set one option',
    body: optionUpdateBody,
    response: z.object({ key: z.string() }),
  },
] as const satisfies readonly ApiOperation[];
