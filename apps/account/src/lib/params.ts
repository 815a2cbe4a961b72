import { AppError } from '@modelgate/errors';

const POSITIVE_ID = /^[1-9][0-9]{0,9}$/;

/** A path id; anything that cannot be an id names nothing, so it is a 404 like an unknown id. */
export function idParam(value: string | string[] | undefined, what: string): number {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text || !POSITIVE_ID.test(text) || Number(text) > 2_147_483_647) throw new AppError('not_found', `${what} not found`);
  return Number(text);
}
