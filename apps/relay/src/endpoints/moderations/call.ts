import type { ModerationBody } from '@modelgate/schemas/relay';
import type { Metering } from '../../features/billing/pricing';
import type { RelayCall } from '../../features/relay/relay-call';
import { ClientBody } from '../../dialects/client-body';
import { DEFAULT_MODERATION_MODEL } from '../../dialects/openai/media-requests';
import { type MediaAnswerReader, PassThroughMediaCall } from '../media';

/** A moderation answer reports nothing billable. */
const NOTHING_REPORTED: MediaAnswerReader = { tokens: undefined, metered: () => undefined };

/**
 * `POST /v1/moderations` (docs/api.md 2.13): passed through to OpenAI-compatible channels; free
 * unless ModelPrice prices the model per request (docs/api.md 2.14).
 */
export class ModerationCall extends PassThroughMediaCall {
  readonly surface = 'moderations' as const;
  readonly model: string;
  readonly stream = false;
  readonly estimate: RelayCall['estimate'] = { promptTokens: 0, completionTokens: 0 };
  readonly metering: Metering = { unit: 'request', tokenPriced: false, freeUnlessPriced: true, estimate: { units: 1, billed: { requests: 1 } } };
  protected readonly client: ClientBody;

  constructor(body: ModerationBody, raw: Buffer) {
    super();
    this.model = body.model ?? DEFAULT_MODERATION_MODEL;
    this.client = new ClientBody(raw, body, false);
  }

  protected answerReader(): MediaAnswerReader {
    return NOTHING_REPORTED;
  }
}
