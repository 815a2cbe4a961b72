import { withOtherFields } from '../../core/json';

/**
 * A Messages body as the clouds' Anthropic endpoints take it (Bedrock InvokeModel, Vertex AI
 * rawPredict): the API version in the body, no `model` (the path names it), and `stream` only
 * where the endpoint reads it. Blocks keep their content (thinking signatures included). The
 * undefined fields keep the source's out and are left out by JSON.stringify.
 */
export function cloudMessagesBody(version: string, messages: object, keepStream: boolean): Record<string, unknown> {
  const known: Record<string, unknown> = keepStream ? { anthropic_version: version, model: undefined } : { anthropic_version: version, model: undefined, stream: undefined };
  return withOtherFields(known, messages as Record<string, unknown>);
}
