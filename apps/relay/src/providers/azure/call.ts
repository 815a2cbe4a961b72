import { AZURE_API_VERSION, CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { UpstreamBody, UpstreamCall, UpstreamTarget } from '../../core/provider';
import { jsonPost } from '../upstream-call';

export const AZURE_FACTS = CHANNEL_TYPES[CHANNEL_TYPE.azure];

/** The operations Azure serves per deployment, as the path after `/openai/deployments/{deployment}/`. */
export type DeploymentOperation =
  | 'chat/completions'
  | 'completions'
  | 'embeddings'
  | 'images/generations'
  | 'images/edits'
  | 'audio/speech'
  | 'audio/transcriptions'
  | 'audio/translations';

/** The v1 API's Responses route: the deployment goes in the body's `model`, no api-version. */
export const RESPONSES_PATH = '/openai/v1/responses';

/**
 * `/openai/deployments/{deployment}/{operation}?api-version=...` (docs/api.md 2.12): the upstream
 * model is the deployment name; the channel's `settings.api_version`, else AZURE_API_VERSION.
 */
export function deploymentPath(channel: UpstreamTarget, deployment: string, operation: DeploymentOperation): string {
  const apiVersion = encodeURIComponent(channel.settings.api_version ?? AZURE_API_VERSION);
  return `/openai/deployments/${encodeURIComponent(deployment)}/${operation}?api-version=${apiVersion}`;
}

/** A JSON POST to an Azure OpenAI resource, its key in `api-key` (Azure's header, not a bearer token). */
export function azurePost(channel: UpstreamTarget, path: string, body: UpstreamBody): UpstreamCall {
  return jsonPost(channel, path, body, { 'api-key': channel.key });
}
