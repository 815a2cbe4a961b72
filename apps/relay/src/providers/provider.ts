import type { ChannelTypeFacts } from '@modelgate/schemas';
import type { ChannelRecord } from '../features/channels/channel-cache';
import type { SseEvent } from '../features/upstream/sse';
import type { ChatRequest, ChatResponse, ChatStreamEvent, EmbeddingRequest, EmbeddingResponse } from './chat';

/** What a provider needs of a channel to address it. */
export type UpstreamTarget = Pick<ChannelRecord, 'key' | 'pathPrefix'>;

/** One upstream HTTP request (POST to the channel's origin). */
export interface UpstreamCall {
  /** The path, the channel's `pathPrefix` included, query string included where the API needs one. */
  path: string;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** An upstream error body, read into the fields the OpenAI error table (docs/api.md 1.3) needs. */
export interface UpstreamError {
  message?: string;
  /** OpenAI `type`, Anthropic `error.type`. */
  type?: string;
  param?: string;
  code?: string | number;
  /** Google's gRPC status name. */
  status?: string;
}

/** Reads one upstream chat stream, event by event, into internal events. */
export interface ChatStreamDecoder {
  /**
   * The internal events one upstream SSE event stands for (often none, never held back for
   * later). Throws StreamEventError when the event is malformed or reports a failure.
   */
  decode(event: SseEvent): ChatStreamEvent[];
  /** True once the upstream said it is done sending; later bytes are ignored. */
  readonly done: boolean;
  /**
   * True once the upstream marked the answer whole (its end marker, or the chunk that finishes it):
   * a stream that ends before was cut short, whatever it delivered.
   */
  readonly complete: boolean;
}

/**
 * Everything specific to one provider (docs/api.md 2.6): its upstream requests, the conversion of
 * its answers to and from the internal chat form, its errors and its auto-disable rule. One folder
 * per provider under src/providers, one line per provider in the registry.
 */
export interface Provider {
  readonly facts: ChannelTypeFacts;
  /** A chat request in the provider's dialect (streamed when `request.stream`). */
  chatRequest(channel: UpstreamTarget, upstreamModel: string, request: ChatRequest): UpstreamCall;
  /** A 2xx chat answer (the parsed JSON body). Throws UpstreamFailure('other') when it is not one. */
  chatResponse(body: unknown): ChatResponse;
  /** A decoder for one streamed chat answer. */
  chatStream(): ChatStreamDecoder;
  /** Embeddings, for providers that have them (docs/api.md 2.8). */
  embeddings?: {
    request(channel: UpstreamTarget, upstreamModel: string, request: EmbeddingRequest): UpstreamCall;
    /** A 2xx answer (parsed JSON). Throws UpstreamFailure('other') when it is not one. */
    response(body: unknown): EmbeddingResponse;
  };
  /** The error an upstream error body reports, or undefined when the body is not one. */
  errorOf(body: Buffer): UpstreamError | undefined;
  /**
   * Why a channel that answered this must be disabled (docs/api.md 2.4: 401 / 403 / quota
   * exhausted, in this provider's words), or undefined for a failure of this request only.
   */
  disablingReason(status: number, error: UpstreamError | undefined): string | undefined;
}
