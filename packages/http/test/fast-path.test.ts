// The fast path shared by the relay and the edge: direct routes on node's own objects, every other
// request to Express.
import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, dialectForPath } from '@modelgate/errors';
import { createLogger } from '@modelgate/logger';
import express from 'express';
import { decodeParam, type DirectRequest, type DirectResponse, type DirectRoute, directRoutes, literalPath, withFastPath } from '../src/fast-path';
import { errorHandler, notFound } from '../src/errors';
import { requestId } from '../src/request-id';
import { closeServer, listen } from '../src/server';

const TARGET_PATH = /^\/v1beta\/models\/([^/]+)$/;

/** Answers what the handlers saw: whose objects they were and the fields the dispatch set. */
const echoRoute: DirectRoute = {
  method: 'POST',
  label: '/v1/echo',
  match: literalPath('/v1/echo'),
  handlers: [
    (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        nodeObjects: Object.getPrototypeOf(req) === IncomingMessage.prototype && Object.getPrototypeOf(res) === ServerResponse.prototype,
        requestId: req.requestId,
        path: req.path,
        query: req.query,
        route: req.route.path,
        ip: req.ip,
      }));
    },
  ],
};

const failingRoute: DirectRoute = {
  method: 'POST',
  label: '/v1/fail',
  match: literalPath('/v1/fail'),
  handlers: [
    async () => {
      await Promise.resolve();
      throw new AppError('model_not_found', 'no such model', { retryAfter: 3 });
    },
  ],
};

const geminiLikeRoute: DirectRoute = {
  method: 'POST',
  label: '/v1beta/models/:target',
  match(path) {
    const target = TARGET_PATH.exec(path)?.[1];
    return target === undefined ? undefined : { target: decodeParam(target) };
  },
  handlers: [
    (req, _res, next) => next(new AppError('invalid_json', `cannot read the body for ${String(req.params.target)}`)),
  ],
};

let server: Server;
let url: string;

beforeAll(async () => {
  const logger = createLogger({ service: 'relay', level: 'silent' });
  const onError = errorHandler<DirectRequest, DirectResponse>(logger, (req) => dialectForPath(req.path));
  const app = express();
  app.use(requestId());
  app.get('/v1/echo', (_req, res) => {
    res.json({ servedBy: 'express' });
  });
  app.use(notFound((req) => dialectForPath(req.path)));
  const handler = withFastPath(app, directRoutes({
    trust: () => false,
    perRequest: [requestId()],
    routes: [echoRoute, failingRoute, geminiLikeRoute],
    onError,
  }));
  server = await listen(handler, 0, '127.0.0.1');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => closeServer(server));

const post = (path: string) => fetch(`${url}${path}`, { method: 'POST', headers: { 'x-request-id': 'rid-1' } });

it('serves a direct route on node objects, after the per-request middlewares', async () => {
  const response = await post('/V1/Echo/?a=1&a=2&b=x');
  expect(response.status).toBe(200);
  expect(response.headers.get('x-request-id')).toBe('rid-1');
  expect(await response.json()).toEqual({
    nodeObjects: true,
    requestId: 'rid-1',
    path: '/V1/Echo/',
    query: { a: ['1', '2'], b: 'x' },
    route: '/v1/echo',
    ip: '127.0.0.1',
  });
});

it.each([
  ['another method on a direct path', 'GET', '/v1/echo', 200, { servedBy: 'express' }],
  ['an unknown path', 'POST', '/v1/unknown', 404, {
    error: { message: 'no route for POST /v1/unknown (request id: rid-1)', type: 'invalid_request_error', param: null, code: 'not_found' },
  }],
])('hands %s to Express', async (_case, method, path, status, body) => {
  const response = await fetch(`${url}${path}`, { method, headers: { 'x-request-id': 'rid-1' } });
  expect(response.status).toBe(status);
  expect(response.headers.get('x-request-id')).toBe('rid-1');
  expect(await response.json()).toEqual(body);
});

it.each([
  ['a rejected handler, in the OpenAI dialect with its Retry-After', '/v1/fail', 404, { 'retry-after': '3' }, {
    error: { message: 'no such model (request id: rid-1)', type: 'invalid_request_error', param: null, code: 'model_not_found' },
  }],
  ['an error passed to next(), in the Google dialect', '/v1beta/models/gemini-2.5-flash:generateContent', 400, {}, {
    error: { code: 400, message: 'cannot read the body for gemini-2.5-flash:generateContent', status: 'INVALID_ARGUMENT' },
  }],
  ['a malformed percent-encoded param, as Express answers it', '/v1beta/models/%E0%A4%A:generateContent', 400, {}, {
    error: { code: 400, message: 'invalid request', status: 'INVALID_ARGUMENT' },
  }],
])('answers %s', async (_case, path, status, headers, body) => {
  const response = await post(path);
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.headers.get('x-request-id')).toBe('rid-1');
  for (const [name, value] of Object.entries(headers)) expect(response.headers.get(name)).toBe(value);
  expect(await response.json()).toEqual(body);
});
