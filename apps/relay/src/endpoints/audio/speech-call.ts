import type { SpeechBody } from '@modelgate/schemas/relay';
import type { Metering } from '../../features/billing/pricing';
import type { RelayCall } from '../../features/relay/relay-call';
import { estimateTextTokens } from '../../features/relay/tokens';
import { jsonObjectIn } from '../../core/json';
import type { SseEvent } from '../../core/provider';
import { ClientBody } from '../../dialects/client-body';
import { speechCharacters } from '../../dialects/openai/media-requests';
import { type MediaAnswerReader, PassThroughMediaCall, type ReportedTokens, reportedMediaTokens, roundedUnits } from '../media';

/** A speech answer's tokens: reported only by `speech.audio.done` in a `stream_format: "sse"` answer. */
class SpeechAnswerReader implements MediaAnswerReader {
  tokens: ReportedTokens | undefined;

  event(event: SseEvent): void {
    const data = event.data === null ? undefined : jsonObjectIn(event.data);
    if (data?.type === 'speech.audio.done') this.tokens = reportedMediaTokens(data.usage);
  }

  metered(): undefined {
    return undefined;
  }
}

/**
 * `POST /v1/audio/speech` (docs/api.md 2.13): passed through to OpenAI and Azure channels, the audio
 * relayed as it arrives. Priced per 1,000 input characters, or by the tokens an `sse` answer
 * reports (docs/api.md 2.14).
 */
export class SpeechCall extends PassThroughMediaCall {
  readonly surface = 'speech' as const;
  readonly model: string;
  // The answer is relayed as it arrives, audio or events.
  readonly stream = true;
  readonly estimate: RelayCall['estimate'];
  readonly metering: Metering;
  protected readonly client: ClientBody;

  constructor(body: SpeechBody, raw: Buffer) {
    super();
    this.model = body.model;
    const characters = speechCharacters(body.input);
    const events = body.stream_format === 'sse';
    // Audio output tokens are not known up front: about one per input character is reserved.
    this.estimate = events ? { promptTokens: estimateTextTokens(body.input), completionTokens: characters } : { promptTokens: 0, completionTokens: 0 };
    this.metering = { unit: '1k_characters', tokenPriced: events, estimate: { units: roundedUnits(characters / 1000), billed: { characters } } };
    this.client = new ClientBody(raw, body, false);
  }

  protected answerReader(): SpeechAnswerReader {
    return new SpeechAnswerReader();
  }
}
