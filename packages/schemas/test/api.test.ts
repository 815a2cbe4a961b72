import { API_OPERATIONS as EXACT_OPERATIONS, type ApiOperation } from '../src';

/** Widened: these checks read the optional fields every operation may have. */
const API_OPERATIONS: readonly ApiOperation[] = EXACT_OPERATIONS;

/** The path parameters of an Express-style path: `/api/token/:id` -> ['id']. */
const pathParameters = (path: string) => [...path.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]);

describe('API_OPERATIONS', () => {
  it('describes each /api operation once', () => {
    const keys = API_OPERATIONS.map((operation) => `${operation.method} ${operation.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const operation of API_OPERATIONS) expect(operation.path).toMatch(/^\/api\//);
  });

  it('declares a schema for exactly the path parameters of each path', () => {
    for (const operation of API_OPERATIONS) {
      const declared = operation.params ? Object.keys(operation.params.shape) : [];
      expect({ path: operation.path, params: declared }).toEqual({ path: operation.path, params: pathParameters(operation.path) });
    }
  });

  it('answers raw bodies only where docs/api.md says so: the Stripe webhook, the log exports and the document', () => {
    expect(API_OPERATIONS.filter((operation) => operation.raw).map((operation) => `${operation.raw} ${operation.path}`)).toEqual([
      'application/json /api/openapi.json',
      'text/csv /api/log/self/export',
      'text/csv /api/log/export',
      'application/json /api/stripe/webhook',
    ]);
  });

  it('answers with a redirect only on the single sign-on routes (docs/api.md 3.9.2)', () => {
    expect(API_OPERATIONS.filter((operation) => operation.redirect).map((operation) => operation.path)).toEqual([
      '/api/oauth/oidc/login',
      '/api/oauth/oidc/callback',
    ]);
  });
});
