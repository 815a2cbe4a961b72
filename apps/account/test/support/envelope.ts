import type { Response } from 'supertest';

/** Asserts the docs/api.md 1.1 failure envelope with its status and machine code. */
export function expectFailure(res: Response, status: number, code: string, messagePattern?: RegExp): void {
  expect({ status: res.status, success: res.body.success, code: res.body.code }).toEqual({ status, success: false, code });
  expect(typeof res.body.message).toBe('string');
  if (messagePattern) expect(res.body.message).toMatch(messagePattern);
}

export function expectOk(res: Response): unknown {
  expect({ status: res.status, success: res.body.success, message: res.body.message }).toEqual({ status: 200, success: true, message: '' });
  return res.body.data;
}
