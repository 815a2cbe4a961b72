import type { z } from 'zod';

/**
 * Object.prototype's member names, and `prototype`: as keys of a plain object they read an inherited
 * member instead of "absent" (a price lookup once got a function and charged NaN). Model names,
 * group names and the keys of the ratio options may not be one of them; only the exact names are
 * refused (`Constructor` or `my__proto__model` are ordinary names).
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

export const RESERVED_NAME_MESSAGE = 'must not be __proto__, constructor, prototype or another Object.prototype member name';

export function isReservedName(name: string): boolean {
  return RESERVED_NAMES.has(name);
}

/** A model or group name schema with the reserved-name rule added. */
export function unreservedName<S extends z.ZodType<string, string>>(schema: S) {
  return schema.refine((name) => !isReservedName(name), RESERVED_NAME_MESSAGE);
}
