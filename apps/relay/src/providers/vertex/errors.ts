import type { UpstreamError } from '../../core/provider';
import { anthropicDisablingReason, anthropicErrorOf } from '../anthropic/errors';
import { disablingReason as googleDisablingReason, errorOf as googleErrorOf } from '../gemini/errors';

/**
 * Claude models report their own errors in Anthropic's shape (`error.type`); Google's front
 * (credentials, permissions, quotas) and Gemini models in Google's (`error.status`).
 */
export function errorOf(body: Buffer): UpstreamError | undefined {
  const anthropic = anthropicErrorOf(body);
  return anthropic?.anthropicType === undefined ? googleErrorOf(body) : anthropic;
}

/** Google's rules (401 / 403, exhausted billing), then Anthropic's (credit balance, spend limit). */
export function disablingReason(status: number, error: UpstreamError | undefined): string | undefined {
  return googleDisablingReason(status, error) ?? anthropicDisablingReason(status, error);
}
