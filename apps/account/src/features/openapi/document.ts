import { anthropicErrorType, ENVELOPE_ERROR_STATUS, grpcStatusName } from '@modelgate/errors';
import { API_OPERATIONS, type ApiAuth, type ApiOperation, type Dialect, emptyBody } from '@modelgate/schemas';
import { type MultipartFile, RELAY_OPERATIONS, type RelayOperation } from '@modelgate/schemas/relay';
import { z } from 'zod';
import { SESSION_COOKIE } from '../auth/session-store';

type JsonSchema = Record<string, unknown>;

/** A schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect): what a client sends, or what it receives. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/api/token/:id` -> `/api/token/{id}`; `/v1beta/models/:model:generateContent` -> `/v1beta/models/{model}:generateContent`. */
const openApiPath = (path: string) => path.replace(/\/:([A-Za-z_]+)/g, '/{$1}');

/** What `/api` and relay operations share: the request line and its parameters. */
type RequestDescription = Pick<ApiOperation, 'method' | 'path' | 'summary' | 'query' | 'params'>;

/** Bytes, as OpenAPI tools read a file part or a binary answer. */
const BINARY = { type: 'string', format: 'binary' };

function jsonRequestBody(body: z.ZodType, required: boolean): JsonSchema {
  return { required, content: { 'application/json': { schema: jsonSchemaOf(body, 'input') } } };
}

/**
 * A multipart/form-data body (docs/api.md 2.13): the text fields of `fields` (their values are text,
 * so numbers and booleans show as patterned strings) and each file part as binary, with the media
 * types it may have. A repeatable part takes one file or several.
 */
function multipartRequestBody(fields: z.ZodType, files: Readonly<Record<string, MultipartFile>>): JsonSchema {
  const text = jsonSchemaOf(fields, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  const parts = Object.entries(files);
  const fileProperties = parts.map(([name, file]) => [
    name,
    { description: file.description, ...(file.repeated ? { anyOf: [BINARY, { type: 'array', items: BINARY }] } : BINARY) },
  ]);
  const schema = {
    ...text,
    properties: { ...text.properties, ...Object.fromEntries(fileProperties) },
    required: [...(text.required ?? []), ...parts.filter(([, file]) => file.required).map(([name]) => name)],
  };
  const encoding = Object.fromEntries(parts.map(([name, file]) => [name, { contentType: file.contentType }]));
  return { required: true, content: { 'multipart/form-data': { schema, encoding } } };
}

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
  apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'A Modelgate API key (`sk-...`, 3.2) for the relay surfaces (docs/api.md 2); the `sk-` prefix may be left out.' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A Modelgate API key, as Anthropic\'s SDKs send it.' },
  googleApiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: 'A Modelgate API key, as Google\'s SDKs send it.' },
  googleApiKeyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'A Modelgate API key in the query string (Gemini routes only).' },
};

const SECURITY: Record<ApiAuth, JsonSchema[]> = {
  public: [],
  session: [{ sessionCookie: [] }],
  user: [{ sessionCookie: [], newApiUser: [] }, { accessToken: [], newApiUser: [] }],
  admin: [{ sessionCookie: [], newApiUser: [] }, { accessToken: [], newApiUser: [] }],
  root: [{ sessionCookie: [], newApiUser: [] }, { accessToken: [], newApiUser: [] }],
  webhook: [{ stripeSignature: [] }],
};

const ROLE_NOTE: Record<ApiAuth, string> = {
  public: 'No authentication.',
  session: 'The session cookie alone (no New-Api-User).',
  user: 'Any logged-in user.',
  admin: 'Admins (role >= 10).',
  root: 'Root (role 100).',
  webhook: 'Stripe, signed.',
};

/** docs/api.md 2, key table: where each relay route takes the key. */
const RELAY_SECURITY: Record<Dialect, JsonSchema[]> = {
  openai: [{ apiKeyBearer: [] }],
  anthropic: [{ apiKeyHeader: [] }, { apiKeyBearer: [] }],
  gemini: [{ googleApiKeyHeader: [] }, { googleApiKeyQuery: [] }, { apiKeyBearer: [] }],
};

const RELAY_KEY_NOTE: Record<Dialect, string> = {
  openai: 'API key in `Authorization: Bearer`.',
  anthropic: 'API key in `x-api-key` or `Authorization: Bearer`.',
  gemini: 'API key in `x-goog-api-key`, `?key=` or `Authorization: Bearer`.',
};

/** The statuses the relay answers errors with (docs/api.md 1.3 table). */
const RELAY_ERROR_STATUSES = [400, 401, 403, 404, 408, 413, 429, 431, 500, 502, 503, 504];
const uniqueOver = (name: (status: number) => string) => [...new Set(RELAY_ERROR_STATUSES.map(name))];

/** docs/api.md 1.3: the relay's error bodies, one shape per dialect, named as components `<Dialect>Error`. */
const RELAY_ERROR_SCHEMAS: Record<Dialect, { name: string; description: string; schema: JsonSchema }> = {
  openai: {
    name: 'OpenAIError',
    description: 'Failure, in OpenAI\'s shape; the message ends with the request id',
    schema: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['message', 'type', 'code'],
          properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: ['string', 'null'] } },
        },
      },
    },
  },
  anthropic: {
    name: 'AnthropicError',
    description: 'Failure, in Anthropic\'s shape; the request id is in `X-Request-Id`',
    schema: {
      type: 'object',
      required: ['type', 'error'],
      properties: {
        type: { const: 'error' },
        error: { type: 'object', required: ['type', 'message'], properties: { type: { enum: uniqueOver(anthropicErrorType) }, message: { type: 'string' } } },
      },
    },
  },
  gemini: {
    name: 'GoogleError',
    description: 'Failure, in Google\'s shape; the request id is in `X-Request-Id`',
    schema: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message', 'status'],
          properties: { code: { type: 'integer' }, message: { type: 'string' }, status: { enum: uniqueOver(grpcStatusName) } },
        },
      },
    },
  },
};

const relayErrorResponses = () =>
  Object.fromEntries(
    Object.values(RELAY_ERROR_SCHEMAS).map(({ name, description, schema }) => [name, { description, content: { 'application/json': { schema } } }]),
  );

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

/** A browser redirect (the sign-in routes): failures redirect too, so it is the only answer. */
function redirectResponses(location: string): JsonSchema {
  return { '302': { description: `Redirect to ${location}`, headers: { Location: { schema: { type: 'string' } } } } };
}

function successResponse(operation: ApiOperation): JsonSchema {
  const data = jsonSchemaOf(operation.response, 'output');
  const schema = operation.raw
    ? data
    : { type: 'object', required: ['success', 'message', 'data'], properties: { success: { const: true }, message: { type: 'string' }, data } };
  return { description: 'Success', content: { [operation.raw ?? 'application/json']: { schema } } };
}

/** The relay's success: the provider's object (main fields), raw content (audio, subtitles), server-sent events, or several. */
function relaySuccessResponse(operation: RelayOperation): JsonSchema {
  const content: JsonSchema = {};
  const raw = operation.raw ?? [];
  if (operation.response) content['application/json'] = { schema: jsonSchemaOf(operation.response, 'output') };
  for (const answer of raw) content[answer.contentType] = { schema: answer.binary ? BINARY : { type: 'string' } };
  if (operation.stream) content['text/event-stream'] = { schema: { type: 'string' } };
  const answersOtherwise = operation.response !== undefined || raw.length > 0;
  const parts = [
    operation.response ? 'The provider\'s object (its main fields are described; others pass through)' : '',
    ...raw.map((answer) => `${answer.description} (\`${answer.contentType}\`)`),
    operation.stream
      ? `${answersOtherwise ? `with ${operation.streamWhen ?? '`"stream": true`'}, server-sent` : 'Server-sent'} events: ${operation.stream}`
      : '',
  ];
  return { description: parts.filter(Boolean).join('; '), content };
}

/** The operation object: the request part is the same for `/api` and the relay, `described` adds who may call it and the answers. */
function operationObject(operation: RequestDescription, described: JsonSchema, requestBody: JsonSchema | undefined): JsonSchema {
  const parameters = [...parametersOf(operation.params, 'path'), ...parametersOf(operation.query, 'query')];
  return {
    operationId: `${operation.method}${operation.path.replace(/^\/api/, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
    summary: operation.summary,
    ...described,
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
  };
}

function apiOperationObject(operation: ApiOperation, errorRefs: Record<string, JsonSchema>): JsonSchema {
  return operationObject(
    operation,
    {
      description: ROLE_NOTE[operation.auth],
      'x-modelgate-auth': operation.auth,
      security: SECURITY[operation.auth],
      responses: operation.redirect
        ? redirectResponses(operation.redirect)
        : { '200': successResponse(operation), ...(operation.auth === 'webhook' ? WEBHOOK_ERRORS : errorRefs) },
    },
    operation.body ? jsonRequestBody(operation.body, operation.body !== emptyBody) : undefined,
  );
}

function relayOperationObject(operation: RelayOperation): JsonSchema {
  const { name } = RELAY_ERROR_SCHEMAS[operation.errors];
  const error = { $ref: `#/components/responses/${name}` };
  return operationObject(
    operation,
    {
      description: `Relay (docs/api.md 2). ${RELAY_KEY_NOTE[operation.key]} Errors in ${name.replace('Error', '')}'s shape (docs/api.md 1.3).`,
      security: RELAY_SECURITY[operation.key],
      responses: { '200': relaySuccessResponse(operation), '4XX': error, '5XX': error },
    },
    !operation.body ? undefined : operation.multipart ? multipartRequestBody(operation.body, operation.multipart) : jsonRequestBody(operation.body, true),
  );
}

/**
 * The OpenAPI 3.1 document of `/api` (docs/api.md 3) and of the relay surfaces (docs/api.md 2),
 * generated from the operation tables of @modelgate/schemas: the account service and the relay
 * validate requests with the same schemas.
 */
export function buildOpenApiDocument(
  version: string,
  operations: readonly ApiOperation[] = API_OPERATIONS,
  relayOperations: readonly RelayOperation[] = RELAY_OPERATIONS,
): JsonSchema {
  const responses = errorResponses();
  const errorRefs = Object.fromEntries(Object.keys(responses).map((name) => [name.replace('Error', ''), { $ref: `#/components/responses/${name}` }]));
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const described = [
    ...operations.map((operation) => [operation, apiOperationObject(operation, errorRefs)] as const),
    ...relayOperations.map((operation) => [operation, relayOperationObject(operation)] as const),
  ];
  for (const [operation, object] of described) {
    const path = openApiPath(operation.path);
    paths[path] = { ...paths[path], [operation.method]: object };
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Modelgate API',
      version,
      description:
        'The `/api` of docs/api.md 3: answers are envelopes `{success, message, data}` (docs/api.md 1.1) except where the media type says otherwise. ' +
        'The relay surfaces of docs/api.md 2 (`/v1`, `/v1beta`): the providers\' wire formats, with an API key, errors in the dialect of each route (docs/api.md 1.3).',
    },
    paths,
    components: { securitySchemes: SECURITY_SCHEMES, responses: { ...responses, ...relayErrorResponses() } },
  };
}
