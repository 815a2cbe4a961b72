import { ENVELOPE_ERROR_STATUS } from '@modelgate/errors';
import { API_OPERATIONS, type ApiAuth, type ApiOperation, emptyBody } from '@modelgate/schemas';
import { z } from 'zod';
import { SESSION_COOKIE } from '../auth/session-store';

type JsonSchema = Record<string, unknown>;

/** A schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect): what a client sends, or what it receives. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/api/token/:id` -> `/api/token/{id}`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

/** Query or path parameters from an object schema's properties. */
function parametersOf(schema: z.ZodObject | undefined, location: 'query' | 'path'): JsonSchema[] {
  if (!schema) return [];
  const { properties = {}, required = [] } = jsonSchemaOf(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.includes(name),
    schema: property,
  }));
}

/** docs/api.md 1.2: a session cookie or an access token, each with the `New-Api-User` header. */
const SECURITY_SCHEMES = {
  sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Set by POST /api/user/login; 7 days, extended by every authenticated call.' },
  accessToken: { type: 'http', scheme: 'bearer', description: 'From GET /api/user/token; when present it is the credential and the cookie is ignored.' },
  newApiUser: { type: 'apiKey', in: 'header', name: 'New-Api-User', description: 'The authenticated user\'s id, required with either credential.' },
  stripeSignature: { type: 'apiKey', in: 'header', name: 'Stripe-Signature', description: 'Stripe\'s signature over the raw body (docs/api.md 3.5).' },
};

const SECURITY: Record<ApiAuth, JsonSchema[]> = {
  public: [],
  user: [{ sessionCookie: [], newApiUser: [] }, { accessToken: [], newApiUser: [] }],
  admin: [{ sessionCookie: [], newApiUser: [] }, { accessToken: [], newApiUser: [] }],
  root: [{ sessionCookie: [], newApiUser: [] }, { accessToken: [], newApiUser: [] }],
  webhook: [{ stripeSignature: [] }],
};

const ROLE_NOTE: Record<ApiAuth, string> = {
  public: 'No authentication.',
  user: 'Any logged-in user.',
  admin: 'Admins (role >= 10).',
  root: 'Root (role 100).',
  webhook: 'Stripe, signed.',
};

/** Error answers (docs/api.md 1.1): one response per HTTP status, its `code` one of that status's codes. */
function errorResponses(): Record<string, JsonSchema> {
  const codesByStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(ENVELOPE_ERROR_STATUS)) codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
  return Object.fromEntries(
    [...codesByStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [
      `Error${status}`,
      {
        description: `Failure: ${codes.join(', ')}`,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['success', 'message', 'code'],
              properties: { success: { const: false }, message: { type: 'string' }, code: { enum: codes } },
            },
          },
        },
      },
    ]),
  );
}

/** The Stripe webhook's own refusals (docs/api.md 3.5): not envelopes. */
const WEBHOOK_ERRORS = Object.fromEntries(
  [
    ['400', 'Bad signature or payload'],
    ['413', 'Body too large'],
    ['503', 'The inbox could not store the event; Stripe retries'],
  ].map(([status, description]) => [
    status,
    { description, content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } } },
  ]),
);

function successResponse(operation: ApiOperation): JsonSchema {
  const data = jsonSchemaOf(operation.response, 'output');
  const schema = operation.raw
    ? data
    : { type: 'object', required: ['success', 'message', 'data'], properties: { success: { const: true }, message: { type: 'string' }, data } };
  return { description: 'Success', content: { [operation.raw ?? 'application/json']: { schema } } };
}

function operationObject(operation: ApiOperation, errorRefs: Record<string, JsonSchema>): JsonSchema {
  const parameters = [...parametersOf(operation.params, 'path'), ...parametersOf(operation.query, 'query')];
  return {
    operationId: `${operation.method}${operation.path.replace(/^\/api/, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
    summary: operation.summary,
    description: ROLE_NOTE[operation.auth],
    'x-modelgate-auth': operation.auth,
    security: SECURITY[operation.auth],
    ...(parameters.length ? { parameters } : {}),
    ...(operation.body
      ? { requestBody: { required: operation.body !== emptyBody, content: { 'application/json': { schema: jsonSchemaOf(operation.body, 'input') } } } }
      : {}),
    responses: { '200': successResponse(operation), ...(operation.auth === 'webhook' ? WEBHOOK_ERRORS : errorRefs) },
  };
}

/**
 * The OpenAPI 3.1 document of `/api` (docs/api.md 3), generated from the operation table of
 * @modelgate/schemas: the account service validates requests with the same schemas.
 */
export function buildOpenApiDocument(version: string, operations: readonly ApiOperation[] = API_OPERATIONS): JsonSchema {
  const responses = errorResponses();
  const errorRefs = Object.fromEntries(Object.keys(responses).map((name) => [name.replace('Error', ''), { $ref: `#/components/responses/${name}` }]));
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of operations) {
    const path = openApiPath(operation.path);
    paths[path] = { ...paths[path], [operation.method]: operationObject(operation, errorRefs) };
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Modelgate account API',
      version,
      description: 'The `/api` of docs/api.md 3. Answers are envelopes `{success, message, data}` (docs/api.md 1.1) except where the media type says otherwise.',
    },
    paths,
    components: { securitySchemes: SECURITY_SCHEMES, responses },
  };
}
