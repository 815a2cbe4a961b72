import { z } from 'zod';

export const usernameSchema = z.string().regex(/^[A-Za-z0-9_]{3,20}$/, '3 to 20 letters, digits or _');
export const passwordSchema = z.string().min(8).max(64);
export const emailSchema = z.email().max(100);
/** A user group name, as used in channels' `groups` and the GroupRatio option. */
export const groupSchema = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, '1 to 32 letters, digits, _ or -');

export const AFF_CODE_LENGTH = 8;
