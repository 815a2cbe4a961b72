import { AppError } from '@modelgate/errors';
import type { DirectRoute } from '@modelgate/http';
import { imageEditFieldsSchema } from '@modelgate/schemas/relay';
import { multipartRelayRoute, openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { ImageEditCall } from './edit-call';
import { ImageGenerationCall } from './generation-call';
import { parseFormFields, parseImageGeneration } from '../../dialects/openai/media-requests';

/** `POST /v1/images/generations` (docs/api.md 2.13). */
export function imageGenerationsRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/images/generations', deps, (raw) => new ImageGenerationCall(parseImageGeneration(raw), raw));
}

/** `POST /v1/images/edits` (docs/api.md 2.13, multipart with `image` or `image[]`). */
export function imageEditsRoute(deps: RelayRouteDeps): DirectRoute {
  return multipartRelayRoute('/v1/images/edits', deps, (upload) => {
    const fields = parseFormFields(imageEditFieldsSchema, upload.fields);
    if (!upload.files.some((file) => file.field === 'image' || file.field === 'image[]')) {
      throw new AppError('invalid_request', 'image: an image file is required', { param: 'image' });
    }
    return Promise.resolve(new ImageEditCall(upload, fields));
  });
}
