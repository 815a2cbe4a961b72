import { authOperations } from './auth';
import { channelOperations } from './channels';
import { logOperations } from './logs';
import { oidcOperations } from './oidc';
import { notificationOperations } from './notifications';
import { openApiOperations } from './openapi';
import type { ApiOperation } from './operation';
import { optionOperations } from './options';
import { passwordResetOperations } from './password-reset';
import { paymentOperations } from './payments';
import { pricingOperations } from './pricing';
import { redemptionOperations } from './redemptions';
import { statusOperations } from './status';
import { tokenOperations } from './tokens';
import { twoFactorOperations } from './two-factor';
import { usageOperations } from './usage';
import { verificationOperations } from './verification';
import { selfOperations, userAdminOperations } from './users';

export * from './auth';
export * from './channels';
export * from './common';
export * from './logs';
export * from './oidc';
export * from './notifications';
export * from './openapi';
export * from './operation';
export * from './options';
export * from './password-reset';
export * from './payments';
export * from './pricing';
export * from './redemptions';
export * from './status';
export * from './tokens';
export * from './two-factor';
export * from './usage';
export * from './verification';
export * from './users';

/**
 * Every `/api` operation (docs/api.md 3), by feature. Each element keeps its exact type (its path,
 * method and schemas), so typed clients can look an operation up by `"<method> <path>"`.
 */
export const API_OPERATIONS = [
  ...statusOperations,
  ...openApiOperations,
  ...authOperations,
  ...passwordResetOperations,
  ...verificationOperations,
  ...oidcOperations,
  ...selfOperations,
  ...twoFactorOperations,
  ...notificationOperations,
  ...tokenOperations,
  ...channelOperations,
  ...optionOperations,
  ...logOperations,
  ...paymentOperations,
  ...pricingOperations,
  ...usageOperations,
  ...redemptionOperations,
  ...userAdminOperations,
] as const satisfies readonly ApiOperation[];

/** One element of API_OPERATIONS, with its exact type. */
export type KnownApiOperation = (typeof API_OPERATIONS)[number];
