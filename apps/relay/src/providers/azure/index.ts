import type { NativeOperation, Provider } from '../../core/provider';
import { chatRequestToOpenAI } from '../openai/chat-request';
import { chatResponseFromOpenAI } from '../openai/chat-response';
import { OpenAIChatStreamDecoder } from '../openai/chat-stream';
import { disablingReason, errorOf } from '../openai/errors';
import { AZURE_FACTS, azurePost, type DeploymentOperation, deploymentPath, RESPONSES_PATH } from './call';

const DEPLOYMENT_OPERATIONS: Partial<Record<NativeOperation, DeploymentOperation>> = {
  completions: 'completions',
  chat: 'chat/completions',
  embeddings: 'embeddings',
  images: 'images/generations',
  image_edits: 'images/edits',
  speech: 'audio/speech',
  transcriptions: 'audio/transcriptions',
  translations: 'audio/translations',
};

/**
 * Channel type 3, Azure OpenAI (docs/api.md 2.12): OpenAI's dialect on a resource's deployments.
 * Completions, chat, embeddings, images and audio (docs/api.md 2.13) pass through to the
 * deployment's route, Responses to the v1 API with the deployment as `model`; Messages is
 * translated through chat. Azure's answers and errors
 * are OpenAI's (its extra filter fields pass through, and the OpenAI readers skip them), so are
 * its rules for disabling a channel.
 */
export const azureProvider: Provider = {
  facts: AZURE_FACTS,
  native(operation, channel, deployment) {
    if (operation === 'responses') return (client) => azurePost(channel, RESPONSES_PATH, client.bodyFor(deployment));
    const path = DEPLOYMENT_OPERATIONS[operation];
    if (path === undefined) return undefined;
    return (client) => azurePost(channel, deploymentPath(channel, deployment, path), client.bodyFor(deployment));
  },
  chat: (channel, deployment) => ({
    request: (request) => azurePost(channel, deploymentPath(channel, deployment, 'chat/completions'), JSON.stringify(chatRequestToOpenAI(request, deployment))),
    response: chatResponseFromOpenAI,
    stream: () => new OpenAIChatStreamDecoder(),
  }),
  errorOf,
  disablingReason,
};
