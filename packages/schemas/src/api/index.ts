import { authOperations } from './auth';
import { channelOperations } from './channels';
import { logOperations } from './logs';
import { openApiOperations } from './openapi';
import type { ApiOperation } from './operation';
import { optionOperations } from './options';
import { paymentOperations } from './payments';
import { pricingOperations } from './pricing';
import { statusOperations } from './status';
import { tokenOperations } from './tokens';
import { twoFactorOperations } from './two-factor';
import { usageOperations } from './usage';
import { selfOperations, userAdminOperations } from './users';

export * from './auth';
export * from './channels';
export * from './common';
export * from './logs';
export * from './openapi';
export * from './operation';
export * from './options';
export * from './payments';
export * from './pricing';
export * from './status';
export * from './tokens';
export * from './two-factor';
export * from './usage';
export * from './users';

/**
 * Every `/api` operation (docs/api.md 3), by feature. Each element keeps its exact type (its path,
 * method and schemas), so typed clients can look an operation up by `"<method> <path>"`.
 */
export const API_OPERATIONS = [
  ...statusOperations,
  ...openApiOperations,
  ...authOperations,
  ...selfOperations,
  ...twoFactorOperations,
  ...tokenOperations,
  ...channelOperations,
  ...optionOperations,
  ...logOperations,
  ...paymentOperations,
  ...pricingOperations,
  ...usageOperations,
  ...userAdminOperations,
] as const satisfies readonly ApiOperation[];

/** One element of API_OPERATIONS, with its exact type. */
export type KnownApiOperation = (typeof API_OPERATIONS)[number];
