import { CHANNEL_TYPE, CHANNEL_TYPES, type RelaySurface, VERTEX_DEFAULT_REGION } from '@modelgate/schemas';
import { cloudMessagesBody } from '../anthropic/cloud-body';
import { CredentialRefused, type UpstreamBody, type UpstreamCall, type UpstreamTarget } from '../../core/provider';
import { jsonPost } from '../upstream-call';
import type { ServiceAccount } from './service-account';

export const VERTEX_FACTS = CHANNEL_TYPES[CHANNEL_TYPE.vertex];

/** The surfaces of a Claude model on Vertex AI: everything but Gemini's own generateContent. */
export const CLAUDE_SURFACES: readonly RelaySurface[] = ['chat', 'messages', 'responses'];

/** The Messages API version Vertex AI takes, in the body. */
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Anthropic's models on Vertex AI are named `claude-*` (`claude-sonnet-4@20250514`). */
export function isClaudeModel(upstreamModel: string): boolean {
  return upstreamModel.startsWith('claude-');
}

export type Publisher = 'google' | 'anthropic';

/**
 * `POST {prefix}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`
 * (docs/api.md 2.12), its JSON body as given; `authorize` adds the access token. The project is
 * `settings.project_id`, else the key file's. `@` (Claude versions) stays as it is in the path.
 */
export function vertexPost(channel: UpstreamTarget, account: ServiceAccount, publisher: Publisher, upstreamModel: string, method: string, body: UpstreamBody): UpstreamCall {
  const project = channel.settings.project_id ?? account.projectPath;
  if (project === undefined) throw new CredentialRefused('the channel names no Google Cloud project: set settings.project_id or use a key file with project_id');
  const region = channel.settings.region ?? VERTEX_DEFAULT_REGION;
  const model = encodeURIComponent(upstreamModel).replace(/%40/g, '@');
  return jsonPost(channel, `/v1/projects/${project}/locations/${region}/publishers/${publisher}/models/${model}:${method}`, body, {});
}

/** Claude's method of a whole or a streamed answer. */
export function rawPredictMethod(stream: boolean): string {
  return stream ? 'streamRawPredict' : 'rawPredict';
}

/** A Messages API body as Vertex AI takes it: `stream` kept (streamRawPredict reads it). */
export function rawPredictBody(messages: object): string {
  return JSON.stringify(cloudMessagesBody(VERTEX_ANTHROPIC_VERSION, messages, true));
}
