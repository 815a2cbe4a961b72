import { execFileSync } from 'node:child_process';
import { chargeConsumeBatch } from '@modelgate/db';
import { API_OPERATIONS, type ApiOperation } from '@modelgate/schemas';
import { chatCompletionSchema, generateContentSchema, imageGenerationSchema, messagesSchema, RELAY_OPERATIONS, transcriptionFieldsSchema } from '@modelgate/schemas/relay';
import { createApiKey, createChannel } from '@modelgate/testing';
import type { Express } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { createTestAccount } from './support/app';
import { expectOk } from './support/envelope';
import { loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

/**
 * @seriousme/openapi-schema-validator is ESM-only and reads its schemas via `import.meta.url`, which
 * Jest's CommonJS transform cannot run: it validates in a child Node process instead.
 */
function validateOpenApi(document: unknown): { valid: boolean; errors?: unknown } {
  const script = [
    "import { Validator } from '@seriousme/openapi-schema-validator';",
    "import { readFileSync } from 'node:fs';",
    'const result = await new Validator().validate(JSON.parse(readFileSync(0, "utf8")));',
    'process.stdout.write(JSON.stringify(result));',
  ].join('\n');
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: __dirname, input: JSON.stringify(document) });
  return JSON.parse(output.toString()) as { valid: boolean; errors?: unknown };
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: RouterLayer[] };
  /** Truthy when the layer serves `path`. */
  match(path: string): unknown;
}

/** `METHOD /path` of every route the app registers under `/api`, where every feature router is mounted. */
function registeredApiRoutes(expressApp: Express): string[] {
  const routes: string[] = [];
  const appStack = (expressApp as unknown as { router: { stack: RouterLayer[] } }).router.stack;
  for (const layer of appStack) {
    if (!layer.handle.stack) continue;
    // A router mounted at `/api` serves `/api/...` but not `/`; one mounted at `/` (the probes) serves both.
    const prefix = layer.match('/api') && !layer.match('/') ? '/api' : '';
    for (const inner of layer.handle.stack) {
      if (!inner.route) continue;
      for (const method of Object.keys(inner.route.methods)) routes.push(`${method.toUpperCase()} ${prefix}${inner.route.path}`);
    }
  }
  return routes.filter((route) => /^[A-Z]+ \/api\//.test(route)).sort();
}

function operationOf(method: ApiOperation['method'], path: string): ApiOperation {
  const operation = API_OPERATIONS.find((candidate) => candidate.method === method && candidate.path === path);
  if (!operation) throw new Error(`no operation ${method} ${path}`);
  return operation;
}

/**
 * The answer's data (or raw body) is what the table says: it parses, and parsing drops nothing
 * (zod strips undeclared keys, so a field the table does not describe shows as a difference).
 */
function expectDescribed(method: ApiOperation['method'], path: string, res: request.Response): void {
  const operation = operationOf(method, path);
  const answer = operation.raw ? res.body : expectOk(res);
  expect(res.status).toBe(200);
  const parsed = operation.response.safeParse(answer);
  if (!parsed.success) throw new Error(`${method} ${path}: ${parsed.error.message}\n${JSON.stringify(answer)}`);
  expect(parsed.data).toEqual(answer);
}

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, public, with every operation of the table', async () => {
    const res = await request(app).get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    expect(validateOpenApi(res.body)).toEqual({ valid: true });
    for (const operation of API_OPERATIONS) {
      const path = operation.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      expect(res.body.paths[path]?.[operation.method]).toMatchObject({ summary: operation.summary });
    }
    const operationIds = Object.values(res.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) =>
      Object.values(item).map((operation) => operation.operationId),
    );
    expect(new Set(operationIds).size).toBe(API_OPERATIONS.length + RELAY_OPERATIONS.length);
    expectDescribed('get', '/api/openapi.json', res);
  });

  it('documents the envelope, the error codes and both credentials with New-Api-User', async () => {
    const document = (await request(app).get('/api/openapi.json')).body;
    const self = document.paths['/api/user/self'].get;
    expect(self.security).toEqual([
      { sessionCookie: [], newApiUser: [] },
      { accessToken: [], newApiUser: [] },
    ]);
    expect(document.components.securitySchemes.newApiUser).toMatchObject({ type: 'apiKey', in: 'header', name: 'New-Api-User' });
    expect(self.responses['200'].content['application/json'].schema.required).toEqual(['success', 'message', 'data']);
    expect(self.responses['401']).toEqual({ $ref: '#/components/responses/Error401' });
    expect(document.components.responses.Error401.content['application/json'].schema.properties.code.enum).toEqual([
      'unauthorized',
      'invalid_credentials',
    ]);
    expect(document.paths['/api/status'].get.security).toEqual([]);
    expect(document.paths['/api/log/export'].get.responses['200'].content).toHaveProperty(['text/csv']);
    expect(document.paths['/api/token/{id}'].get.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
    expect(document.paths['/api/log'].get.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(
      expect.arrayContaining(['type', 'username', 'p', 'page_size']),
    );
    expect(document.paths['/api/token'].get.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(['p', 'page_size', 'user_id']);
  });
});

/** A request schema as the document carries it: JSON Schema 2020-12 of what a client sends. */
function requestSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

describe('the relay surfaces in GET /api/openapi.json', () => {
  it('lists every relay operation with the request schema the relay validates with', async () => {
    const { paths } = (await request(app).get('/api/openapi.json')).body;
    for (const operation of RELAY_OPERATIONS) {
      const path = operation.path.replace(/\/:([A-Za-z_]+)/g, '/{$1}');
      const described = paths[path]?.[operation.method];
      expect(described).toMatchObject({ summary: operation.summary });
      if (!operation.body) continue;
      // A multipart body's text fields are the schema's; its file parts are added beside them.
      if (operation.multipart) {
        const { properties } = requestSchemaOf(operation.body);
        expect(described.requestBody.content['multipart/form-data'].schema.properties).toMatchObject(properties as object);
      }
      else expect(described.requestBody.content['application/json'].schema).toEqual(requestSchemaOf(operation.body));
    }
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/v1/completions',
        '/v1/chat/completions',
        '/v1/embeddings',
        '/v1/responses',
        '/v1/messages',
        '/v1/messages/count_tokens',
        '/v1/models',
        '/v1beta/models/{model}:generateContent',
        '/v1beta/models/{model}:streamGenerateContent',
        '/v1/models/{model}:generateContent',
        '/v1/images/generations',
        '/v1/images/edits',
        '/v1/audio/speech',
        '/v1/audio/transcriptions',
        '/v1/audio/translations',
        '/v1/moderations',
        '/v1/rerank',
      ]),
    );
    expect(paths['/v1/chat/completions'].post.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: requestSchemaOf(chatCompletionSchema) } },
    });
    expect(paths['/v1/messages'].post.requestBody.content['application/json'].schema).toEqual(requestSchemaOf(messagesSchema));
    expect(paths['/v1beta/models/{model}:generateContent'].post.requestBody.content['application/json'].schema).toEqual(
      requestSchemaOf(generateContentSchema),
    );
    expect(paths['/v1beta/models/{model}:generateContent'].post.parameters).toEqual([
      expect.objectContaining({ name: 'model', in: 'path', required: true }),
    ]);
  });

  it('documents each surface\'s key, error shape and streams', async () => {
    const document = (await request(app).get('/api/openapi.json')).body;
    const { paths, components } = document;

    const chat = paths['/v1/chat/completions'].post;
    expect(chat.security).toEqual([{ apiKeyBearer: [] }]);
    expect(components.securitySchemes.apiKeyBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(chat.responses['4XX']).toEqual({ $ref: '#/components/responses/OpenAIError' });
    expect(Object.keys(chat.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(components.responses.OpenAIError.content['application/json'].schema.properties.error.required).toEqual(['message', 'type', 'code']);

    const messages = paths['/v1/messages'].post;
    expect(messages.security).toEqual([{ apiKeyHeader: [] }, { apiKeyBearer: [] }]);
    expect(components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(messages.responses['5XX']).toEqual({ $ref: '#/components/responses/AnthropicError' });
    expect(components.responses.AnthropicError.content['application/json'].schema.properties.error.properties.type.enum).toEqual(
      expect.arrayContaining(['invalid_request_error', 'authentication_error', 'overloaded_error', 'api_error']),
    );

    const stream = paths['/v1beta/models/{model}:streamGenerateContent'].post;
    expect(stream.security).toEqual([{ googleApiKeyHeader: [] }, { googleApiKeyQuery: [] }, { apiKeyBearer: [] }]);
    expect(components.securitySchemes.googleApiKeyQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'key' });
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    expect(stream.responses['4XX']).toEqual({ $ref: '#/components/responses/GoogleError' });
    expect(components.responses.GoogleError.content['application/json'].schema.properties.error.properties.status.enum).toEqual(
      expect.arrayContaining(['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'RESOURCE_EXHAUSTED', 'UNAVAILABLE']),
    );

    expect(paths['/v1/embeddings'].post.responses['200'].content).not.toHaveProperty(['text/event-stream']);
    expect(paths['/v1/models'].get.responses['4XX']).toEqual({ $ref: '#/components/responses/OpenAIError' });
    expect(paths['/v1/models'].get.security).toEqual([{ apiKeyHeader: [] }, { apiKeyBearer: [] }]);
  });

  it('describes the multipart uploads, the audio answer and the media streams (docs/api.md 2.13)', async () => {
    const { paths } = (await request(app).get('/api/openapi.json')).body;
    const binary = { type: 'string', format: 'binary' };

    const transcription = paths['/v1/audio/transcriptions'].post;
    expect(Object.keys(transcription.requestBody.content)).toEqual(['multipart/form-data']);
    const upload = transcription.requestBody.content['multipart/form-data'];
    const fields = requestSchemaOf(transcriptionFieldsSchema) as { properties: Record<string, unknown> };
    expect(upload.schema.properties).toEqual({ ...fields.properties, file: { description: expect.stringContaining('MAX_REQUEST_BODY_MB'), ...binary } });
    expect(upload.schema.required).toEqual(['model', 'file']);
    // Multipart fields are text: a number is a patterned string.
    expect(upload.schema.properties.temperature).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(upload.encoding.file.contentType).toMatch(/^audio\/\*/);
    expect(Object.keys(transcription.responses['200'].content)).toEqual(['application/json', 'text/plain', 'text/event-stream']);
    expect(transcription.responses['200'].description).toContain('with `stream=true`, server-sent events');
    expect(paths['/v1/audio/translations'].post.requestBody).toEqual(transcription.requestBody);
    expect(paths['/v1/audio/translations'].post.responses['200'].content).not.toHaveProperty(['text/event-stream']);

    const edit = paths['/v1/images/edits'].post.requestBody.content['multipart/form-data'];
    expect(edit.schema.properties.image).toMatchObject({ anyOf: [binary, { type: 'array', items: binary }] });
    expect(edit.schema.properties['image[]']).toMatchObject({ anyOf: [binary, { type: 'array', items: binary }] });
    expect(edit.schema.properties.mask).toMatchObject(binary);
    expect(edit.schema.required).toEqual(['prompt']);
    expect(edit.encoding.mask).toEqual({ contentType: 'image/png' });

    const speech = paths['/v1/audio/speech'].post;
    expect(Object.keys(speech.requestBody.content)).toEqual(['application/json']);
    expect(speech.responses['200'].content).toEqual({ 'audio/*': { schema: binary }, 'text/event-stream': { schema: { type: 'string' } } });
    expect(speech.responses['200'].description).toContain('with `"stream_format": "sse"`, server-sent events');
    expect(speech.responses['4XX']).toEqual({ $ref: '#/components/responses/OpenAIError' });

    const images = paths['/v1/images/generations'].post;
    expect(images.requestBody.content['application/json'].schema).toEqual(requestSchemaOf(imageGenerationSchema));
    expect(Object.keys(images.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(images.responses['200'].content['application/json'].schema.properties.data.items.properties).toHaveProperty('b64_json');
    expect(paths['/v1/rerank'].post.responses['200'].content['application/json'].schema.required).toEqual(['model', 'results']);
    expect(paths['/v1/moderations'].post.security).toEqual([{ apiKeyBearer: [] }]);
  });
});

describe('the operation table', () => {
  it('lists exactly the routes the account app registers under /api', () => {
    const described = API_OPERATIONS.map((operation) => `${operation.method.toUpperCase()} ${operation.path}`).sort();
    expect(new Set(described).size).toBe(described.length);
    expect(registeredApiRoutes(app)).toEqual(described);
  });

  it('describes real answers of the running service', async () => {
    expectDescribed('get', '/api/status', await request(app).get('/api/status'));
    const registration = await request(app).post('/api/user/register').send({ username: 'carol', password: 'correct horse' });
    expectDescribed('post', '/api/user/register', registration);
    expectDescribed('post', '/api/user/login', await request(app).post('/api/user/login').send({ username: 'carol', password: 'correct horse' }));

    const root = await loggedInUser(account, { role: ROLE.root });
    const created = await root.agent.post('/api/user').send({ username: 'bob', password: 'correct horse', quota: 500_000 });
    expectDescribed('post', '/api/user', created);
    expectDescribed('get', '/api/user', await root.agent.get('/api/user'));
    expectDescribed('get', '/api/user/:id', await root.agent.get(`/api/user/${created.body.data.id}`));
    expectDescribed('post', '/api/user/manage', await root.agent.post('/api/user/manage').send({ id: created.body.data.id, action: 'promote' }));
    expectDescribed('get', '/api/option', await root.agent.get('/api/option'));
    const channel = await root.agent
      .post('/api/channel')
      .send({ name: 'main', type: 1, key: 'sk-upstream', models: 'gpt-4o-mini', base_url: 'https://api.example.com', settings: {} });
    expectDescribed('post', '/api/channel', channel);
    expectDescribed('get', '/api/channel', await root.agent.get('/api/channel'));

    const user = await loggedInUser(account, { quota: 1_000_000 });
    const { token } = await createApiKey(prisma, user.id);
    const upstream = await createChannel(prisma);
    await prisma.$transaction((tx) =>
      chargeConsumeBatch(
        tx,
        [
          {
            user_id: user.id,
            created_at: new Date().toISOString().replace('Z', ''),
            username: user.username,
            token_id: token.id,
            token_name: token.name,
            model_name: 'gpt-4o-mini',
            charged: 150,
            prompt_tokens: 10,
            completion_tokens: 5,
            use_time_ms: 100,
            first_byte_ms: null,
            is_stream: false,
            channel_id: upstream.id,
            request_id: 'req_openapi',
            other: { model_ratio: 0.075, completion_ratio: 4, group_ratio: 1 },
          },
        ],
        new Map(),
      ),
    );
    expectDescribed('get', '/api/user/self', await user.agent.get('/api/user/self'));
    expectDescribed('get', '/api/user/2fa/status', await user.agent.get('/api/user/2fa/status'));
    expectDescribed('post', '/api/token', await user.agent.post('/api/token').send({ name: 'laptop', model_limits: 'gpt-4o-mini' }));
    expectDescribed('get', '/api/token', await user.agent.get('/api/token'));
    expectDescribed('get', '/api/token/:id', await user.agent.get(`/api/token/${token.id}`));
    expectDescribed('get', '/api/log/self', await user.agent.get('/api/log/self'));
    expectDescribed('get', '/api/log', await root.agent.get('/api/log'));
    expectDescribed('get', '/api/data/self', await user.agent.get('/api/data/self'));
    expectDescribed('get', '/api/data', await root.agent.get('/api/data'));
    expectDescribed('get', '/api/pricing', await user.agent.get('/api/pricing'));
    expectDescribed('get', '/api/user/topup/self', await user.agent.get('/api/user/topup/self'));
    expectDescribed('get', '/api/payment/events', await root.agent.get('/api/payment/events'));
    expectDescribed('post', '/api/user/logout', await user.agent.post('/api/user/logout'));
  });
});
