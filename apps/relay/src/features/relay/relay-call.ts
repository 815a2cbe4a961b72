import type { ServerResponse } from 'node:http';
import type { AppError } from '@modelgate/errors';
import type { RelaySurface } from '@modelgate/schemas';
import type { ChannelRecord } from '../channels/channel-cache';
import type { UpstreamResponse } from '../upstream/client';
import type { CallerSignal } from '../upstream/caller-signal';
import type { ChatUsage } from '../../core/chat';
import type { Provider, StreamFraming, UpstreamCall } from '../../core/provider';
import type { MeteredUse, Metering, OfferedTool } from '../billing/pricing';

/** What reached the client, and what it is billed for (docs/api.md 2.11: every count the charge uses). */
export interface Delivery {
  usage: ChatUsage;
  firstByteMs: number | null;
  /** false: nothing billable reached the client (it left first, or a cut stream generated nothing). */
  billable: boolean;
  /** The upstream broke a stream after the client's first byte (the client was told in-stream). */
  streamFailure?: AppError;
  /** A metered call (RelayCall.metering): whether the answer reported tokens (`usage` then holds them). */
  tokensReported?: boolean;
  /** A metered call: the units the answer showed (images made, seconds heard), when it tells more than the request. */
  metered?: MeteredUse;
}

/**
 * The caller's request as the pipeline reads it: Express's Request has these, and so does a relayed
 * call served directly (see withFastPath in @modelgate/http).
 */
export interface CallerRequest {
  requestId: string;
  /** The client address (X-Forwarded-For from a trusted proxy, else the peer). */
  ip: string | undefined;
}

/** The caller's response: node's, with Express's per-request `locals`. */
export type CallerResponse = ServerResponse & { locals: Record<string, unknown> };

export interface DeliveryContext {
  res: ServerResponse;
  /** Aborted when the client disconnects. */
  signal: CallerSignal;
  startedAt: number;
  channel: ChannelRecord;
  /** The model the channel was asked for (after its mapping). */
  upstreamModel: string;
  /** The channel's provider: reads the answer when the client's dialect is not the channel's. */
  provider: Provider;
  /** How the upstream frames a streamed answer (UpstreamCall.framing); server-sent events when absent. */
  framing?: () => StreamFraming;
}

/**
 * One dialect's request, as the routing pipeline sees it: how to ask a channel, and how to hand a
 * successful upstream answer to the client.
 */
export interface ChannelCall {
  /** What the client called: routing takes the channels of every type that can answer it. */
  surface: RelaySurface;
  /** The model the client asked for (prices, allow-lists, routing, what the client sees). */
  model: string;
  stream: boolean;
  /** The request for one channel, built with its provider (passed through or translated). */
  upstreamRequest(channel: ChannelRecord, upstreamModel: string, provider: Provider): UpstreamCall;
  /**
   * Sends a 2xx upstream answer to the client. Throws UpstreamFailure only before the client got
   * any byte (the pipeline may then try another channel).
   */
  deliver(upstream: UpstreamResponse, context: DeliveryContext): Promise<Delivery>;
  /**
   * For an operation some channel types do not have (count_tokens, docs/api.md 2.9): answers the
   * client without the upstream on such a channel and returns what was delivered; undefined where
   * the channel is asked.
   */
  answerLocally?(context: DeliveryContext): Delivery | undefined;
}

/** A charged call (docs/api.md 2.5): what is reserved before it, what it costs when no usage comes. */
export interface RelayCall extends ChannelCall {
  /** Reserved before the call (docs/api.md 2.5); no cached tokens are known then. */
  estimate: Pick<ChatUsage, 'promptTokens' | 'completionTokens'>;
  /** The prompt's tokens as charged when the upstream reports none (tokenized only then). */
  promptTokens(): number;
  /** The server tools the request offers (docs/api.md 2.14); each needs a ToolPrice. */
  readonly serverTools?: readonly OfferedTool[];
  /** Set for a media call priced per unit where its answer reports no tokens (docs/api.md 2.14). */
  readonly metering?: Metering;
}
