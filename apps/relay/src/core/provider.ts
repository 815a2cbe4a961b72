import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ChannelSettings, ChannelTypeFacts, RelaySurface } from '@modelgate/schemas';
import type { ChatRequest, ChatResponse, ChatStreamEvent, EmbeddingRequest, EmbeddingResponse } from './chat';
import type { ImageRequest, ImageResponse } from './media';

/** What a provider reads of a channel to address and authenticate it. */
export interface UpstreamTarget {
  id: number;
  /** The upstream credential, decrypted. */
  key: string;
  /** Scheme, host and port of the base URL. */
  origin: string;
  /** Path of the base URL without trailing slash ('' for a bare host). */
  pathPrefix: string;
  settings: ChannelSettings;
}

/** One event of an upstream stream. */
export interface SseEvent {
  /** The event as received, separator included: what a pass-through writes. */
  raw: string;
  /** The `data:` lines joined with "\n", or null for an event without data (comments, keep-alives). */
  data: string | null;
  /** The `event:` line's value (Anthropic and Responses name every event), or null. */
  event: string | null;
}

/** Splits a streamed upstream body into events as its bytes arrive; nothing is held back past an event's end. */
export interface StreamFraming {
  push(chunk: Buffer): SseEvent[];
  /** The events left when the body ended. */
  end(): SseEvent[];
}

/** A request body produced while it is sent (a multipart upload, docs/api.md 2.13), readable again for a retry. */
export interface StreamedBody {
  readonly contentType: string;
  /** Its length when known before sending (the upload is whole); sent in chunks otherwise. */
  readonly length: number | undefined;
  /** A fresh stream of the whole body, for one attempt. */
  open(): Readable;
  /** Why the body could not be completed (the client left, it grew too large), once known. */
  failure(): Error | undefined;
}

export type UpstreamBody = Buffer | string | StreamedBody;

export function isStreamedBody(body: UpstreamBody): body is StreamedBody {
  return typeof body === 'object' && !Buffer.isBuffer(body);
}

/** One upstream HTTP request (POST to the channel's origin). */
export interface UpstreamCall {
  /** The path, the channel's `pathPrefix` included, query string included where the API needs one. */
  path: string;
  headers: Record<string, string>;
  body: UpstreamBody;
  /** How a streamed answer is framed; server-sent events when absent. */
  framing?: () => StreamFraming;
}

/** An upstream error body, read into the fields the OpenAI error table (docs/api.md 1.3) needs. */
export interface UpstreamError {
  message?: string;
  /** OpenAI `type`, Anthropic `error.type`, AWS's error type. */
  type?: string;
  param?: string;
  code?: string | number;
  /** Google's gRPC status name. */
  status?: string;
  /**
   * The error's Anthropic type (`overloaded_error` ...) when the upstream answered in Anthropic's
   * shape or names a failure that has one: what a Messages client is told, in place of a type
   * guessed from the status.
   */
  anthropicType?: string;
}

/** Reads one upstream chat stream, event by event, into internal events. */
export interface ChatStreamDecoder {
  /**
   * The internal events one upstream event stands for (often none, never held back for later).
   * Throws StreamEventError when the event is malformed or reports a failure.
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

/** How one channel speaks chat for one upstream model, through the internal form (docs/api.md 2.6). */
export interface ChatWire {
  /** A chat request in the provider's wire format (streamed when `request.stream`). */
  request(request: ChatRequest): UpstreamCall;
  /** A 2xx answer (the parsed JSON body). Throws UpstreamFailure('other') when it is not one. */
  response(body: unknown): ChatResponse;
  /** A decoder for one streamed answer. */
  stream(): ChatStreamDecoder;
}

/** The client operations a channel may serve in the client's own dialect, untouched (docs/api.md 2.6). */
export type NativeOperation = RelaySurface | 'count_tokens';

/** A client's request as a provider forwards it in the same dialect. */
export interface ClientRequest {
  /** The client's body with `model` set to the upstream model: its own bytes when nothing changes. */
  bodyFor(upstreamModel: string): UpstreamBody;
  /** The parsed body, for a provider that edits more than the model. Read only. */
  readonly json: Readonly<Record<string, unknown>>;
  readonly stream: boolean;
  /** The protocol headers of a Messages client (docs/api.md 2.9). */
  readonly anthropicVersion?: string;
  readonly anthropicBeta?: string;
}

/** Builds the upstream call of a request the channel serves in the client's dialect. */
export type NativeRoute = (client: ClientRequest) => UpstreamCall;

/**
 * Everything about talking to one kind of upstream (docs/api.md 2.6, 2.12): where each operation
 * goes, how it is authenticated, how streams are framed, which client dialects pass through, the
 * conversion to and from the internal form, errors and the auto-disable rule. One folder per
 * provider under src/providers, one line per provider in the registry. Providers import neither
 * endpoints nor client dialects; the relay pipeline is handed one per channel.
 */
export interface Provider {
  readonly facts: ChannelTypeFacts;
  /** The surfaces a channel serves for one upstream model; the type's surfaces when absent. */
  surfacesFor?(channel: UpstreamTarget, upstreamModel: string): readonly RelaySurface[];
  /**
   * The route of a client operation the channel serves in the client's own dialect, or undefined
   * when the call must be translated through the internal form.
   */
  native(operation: NativeOperation, channel: UpstreamTarget, upstreamModel: string): NativeRoute | undefined;
  /** Chat through the internal form. */
  chat(channel: UpstreamTarget, upstreamModel: string): ChatWire;
  /** Embeddings through the internal form, for providers that have them (docs/api.md 2.8). */
  embeddings?: {
    request(channel: UpstreamTarget, upstreamModel: string, request: EmbeddingRequest): UpstreamCall;
    /** A 2xx answer (parsed JSON). Throws UpstreamFailure('other') when it is not one. */
    response(body: unknown): EmbeddingResponse;
  };
  /**
   * Image generation through the internal form (docs/api.md 2.13), for providers whose image models
   * are asked otherwise than OpenAI's images API (Gemini's `generateContent` with image output).
   */
  images?: {
    request(channel: UpstreamTarget, upstreamModel: string, request: ImageRequest): UpstreamCall;
    /** A 2xx answer (parsed JSON). Throws UpstreamFailure('other') when it is not one. */
    response(body: unknown): ImageResponse;
  };
  /**
   * Completes a built call's authentication (request signing, a token from a cached exchange);
   * absent when the headers the call was built with are all it needs. Throws UpstreamFailure when
   * the credential cannot be used (a failure of the channel, never of the client).
   */
  authorize?(channel: UpstreamTarget, call: UpstreamCall): Promise<void>;
  /**
   * The upstream refused (401) the credential `authorize` gave `call`. True when that was a cached
   * credential (an access token) the provider now dropped or already replaced: the channel is asked
   * again with a fresh one before the refusal counts against it. False: the key itself was refused.
   */
  credentialRejected?(channel: UpstreamTarget, call: UpstreamCall): boolean;
  /**
   * Drops what the provider keeps per channel (parsed keys, signers, access tokens) for the channels
   * not in `loaded`: a deleted channel's credentials do not stay in memory.
   */
  forgetChannels?(loaded: ReadonlySet<number>): void;
  /** The error an upstream error answer reports, or undefined when it is not one. */
  errorOf(body: Buffer, headers: IncomingHttpHeaders): UpstreamError | undefined;
  /**
   * Why a channel that answered this must be disabled (docs/api.md 2.4: key refused, quota
   * exhausted, in this provider's words), or undefined for a failure of this request only.
   */
  disablingReason(status: number, error: UpstreamError | undefined): string | undefined;
}

/**
 * The channel's credential was refused before any request could be sent (a token exchange
 * rejected it): a failure of the channel, handled like an upstream 401 (docs/api.md 2.4, 2.12).
 * The message never holds the credential.
 */
export class CredentialRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialRefused';
  }
}
