import { AppError } from '@modelgate/errors';
import { CredentialRefused, isStreamedBody, type Provider, type UpstreamCall } from '../../core/provider';
import { describeError } from '@modelgate/http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '@modelgate/logger';
import { type Context, endWhenSettled, failSpan, injectTraceHeaders, REQUEST_ID_ATTRIBUTE, startSpan, traceContextOf, traceHeadersOf } from '@modelgate/telemetry';
import type { CacheInvalidation, OptionValues } from '@modelgate/schemas';
import type { BalanceMirror, BillingAccount } from '../billing/balances';
import {
  chargeFor,
  checkToolPrices,
  meteredCharge,
  meteredPriceFor,
  meteredReservation,
  priceFor,
  type SettledCharge,
  tokenCharge,
} from '../billing/pricing';
import type { ChannelCache, ChannelPlan, ChannelRecord } from '../channels/channel-cache';
import type { ChannelRepository } from '../channels/repository';
import { type AuthContext, checkAllowLists } from '../keys/authenticate';
import type { KeyLimits, LimitedCall } from '../keys/limits';
import type { RelayMetrics, UpstreamSeries } from '../metrics/metrics';
import type { OptionsCache } from '../options/options-cache';
import { CallerSignal } from '../upstream/caller-signal';
import { readBody, UpstreamFailure, type UpstreamClient } from '../upstream/client';
import type { CallerRequest, CallerResponse, ChannelCall, Delivery, RelayCall } from './relay-call';
import { maskUpstreamText, UpstreamExhaustedError, UpstreamHttpError } from './upstream-errors';

/** The client disconnected: nothing more is sent, nothing is charged. */
export class ClientGone extends Error {
  constructor() {
    super('client closed the request');
    this.name = 'ClientGone';
  }
}

export interface RelayServiceDeps {
  channels: ChannelCache;
  channelRepository: ChannelRepository;
  options: OptionsCache;
  balances: BalanceMirror;
  upstream: UpstreamClient;
  publish: (message: CacheInvalidation) => Promise<unknown>;
  logger: Logger;
  metrics: RelayMetrics;
  limits: KeyLimits;
}

/** What every log line about one relayed call carries. */
interface CallTrace {
  requestId: string;
  userId: number;
  model: string;
}

const EMPTY = Buffer.alloc(0);

/** What a call reserves, and how its delivery is charged. */
interface CallPricing {
  reserved: number;
  chargeOf: (delivery: Delivery) => SettledCharge;
}

/** Aborted when the client disconnects before its answer was written. */
function clientSignal(res: CallerResponse): CallerSignal {
  const signal = new CallerSignal();
  res.once('close', () => {
    if (!res.writableFinished) signal.abort();
  });
  return signal;
}

/**
 * The pipeline every relayed call goes through (docs/api.md 1.3 order): limits, allow-lists,
 * channel, price, budget, reservation, upstream attempts with retries, then settlement of the
 * actual charge.
 */
export class RelayService {
  private sequence = 0;

  constructor(private readonly deps: RelayServiceDeps) {}

  async relay(req: CallerRequest, res: CallerResponse, auth: AuthContext, call: RelayCall): Promise<void> {
    const startedAt = Date.now();
    const trace: CallTrace = { requestId: req.requestId, userId: auth.user.id, model: call.model };
    // Priced first: the limits hold the reservation against the key's budget. A price error still
    // answers in its turn, after the limits and the allow-lists (docs/api.md 1.3).
    let pricing: CallPricing | AppError;
    try {
      pricing = this.pricing(this.deps.options.values, call, auth.group);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      pricing = err;
    }
    const { estimate } = call;
    // Set only when tracing is on: untraced, each span below costs one check of it.
    const traced = traceContextOf(res);
    const reservation = traced && startSpan(traced, 'reservation', { [REQUEST_ID_ATTRIBUTE]: req.requestId });
    const admitting = this.deps.limits.admit(res, auth, estimate.promptTokens + estimate.completionTokens, pricing instanceof AppError ? undefined : pricing.reserved);
    const { plan, account, reserved, chargeOf, limited } = await endWhenSettled(reservation, this.admit(req, auth, call, pricing, admitting, traced));
    // Every way out frees the call's lease and gives its tokens and budget hold back; the ways that
    // answer the client do it before the answer's end, so the client's next call finds the slot free.
    try {
      let outcome: { channel: ChannelRecord; series: UpstreamSeries; delivery: Delivery };
      try {
        outcome = await this.attempt(plan, call, res, clientSignal(res), startedAt, trace, traced);
      } catch (err) {
        limited?.end(0, 0);
        await this.deps.balances.release(account, reserved);
        throw err;
      }
      this.observeDelivery(outcome.series, outcome.channel, outcome.delivery, trace);
      if (!outcome.delivery.billable) {
        limited?.end(0, 0);
        await this.deps.balances.release(account, reserved);
        return;
      }
      const charge = chargeOf(outcome.delivery);
      const { usage } = outcome.delivery;
      limited?.end(usage.promptTokens + usage.completionTokens, charge.quota);
      const settlement = traced && startSpan(traced, 'settlement', { [REQUEST_ID_ATTRIBUTE]: req.requestId, 'modelgate.quota': charge.quota });
      await endWhenSettled(settlement, this.settle(req, auth, account, call, reserved, charge, outcome.channel, outcome.delivery, startedAt, traced));
    } finally {
      limited?.end(0, 0);
    }
  }

  /**
   * The checks before the upstream call, answered in docs/api.md 1.3 order: limits, allow-lists and
   * channels, price, budget, balances. The limits' script and the balance reservation go to Redis
   * in the same turn, so a limited call waits for Redis no longer than any other; whatever refuses
   * the call, nothing stays counted or held.
   */
  private async admit(
    req: CallerRequest,
    auth: AuthContext,
    call: RelayCall,
    pricing: CallPricing | AppError,
    admitting: LimitedCall | Promise<LimitedCall> | undefined,
    traced: Context | undefined,
  ): Promise<CallPricing & { plan: ChannelPlan; account: BillingAccount; limited: LimitedCall | undefined }> {
    let plan: ChannelPlan;
    try {
      plan = this.route(req, auth, call, traced);
      if (pricing instanceof AppError) throw pricing;
    } catch (err) {
      // A limit's refusal answers first.
      const limited = admitting && (await admitting);
      limited?.end(0, 0);
      throw err;
    }
    const { reserved } = pricing;
    const account: BillingAccount = { userId: auth.user.id, tokenId: auth.key.id, limitedToken: !auth.key.unlimitedQuota };
    if (!admitting) {
      await this.deps.balances.reserve(account, reserved);
      return { ...pricing, plan, account, limited: undefined };
    }
    const reserving = this.deps.balances.reserve(account, reserved).then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    let limited: LimitedCall;
    try {
      limited = await admitting;
      limited.checkBudget();
    } catch (err) {
      if ((await reserving) === undefined) await this.deps.balances.release(account, reserved);
      throw err;
    }
    const refused = await reserving;
    if (refused) {
      limited.end(0, 0);
      throw refused.err;
    }
    return { ...pricing, plan, account, limited };
  }

  /**
   * What the call reserves, and how its delivery is charged (docs/api.md 2.5, 2.11, 2.14); throws
   * 400 `model_price_error` for a model, or an offered server tool, without a price.
   */
  private pricing(options: OptionValues, call: RelayCall, group: string): CallPricing {
    const { metering } = call;
    if (metering) {
      const price = meteredPriceFor(options, call.model, group, metering);
      return {
        reserved: meteredReservation(options, price, call.estimate, metering),
        chargeOf: (delivery) => meteredCharge(this.deps.options.values, price, metering, call.estimate, delivery),
      };
    }
    const price = priceFor(options, call.model, group);
    // One call of each offered server tool is reserved; the reported calls are charged (docs/api.md 2.14).
    return {
      reserved: chargeFor(price, call.estimate) + checkToolPrices(options, call.serverTools ?? [], price.groupRatio),
      chargeOf: (delivery) => tokenCharge(this.deps.options.values, price, delivery.usage),
    };
  }

  /**
   * A call that costs nothing (count_tokens, docs/api.md 2.9): checked, routed and retried as any
   * other, but never priced, reserved or charged (no consume row).
   */
  async relayUncharged(req: CallerRequest, res: CallerResponse, auth: AuthContext, call: ChannelCall): Promise<void> {
    const startedAt = Date.now();
    const trace: CallTrace = { requestId: req.requestId, userId: auth.user.id, model: call.model };
    const admitting = this.deps.limits.admit(res, auth, 0, undefined);
    const limited = admitting && (await admitting);
    const traced = traceContextOf(res);
    try {
      const plan = this.route(req, auth, call, traced);
      const outcome = await this.attempt(plan, call, res, clientSignal(res), startedAt, trace, traced);
      this.observeDelivery(outcome.series, outcome.channel, outcome.delivery, trace);
    } finally {
      limited?.end(0, 0);
    }
  }

  /** The checks after the limits and before any price (docs/api.md 1.3 order): allow-lists, then the channels. */
  private route(req: CallerRequest, auth: AuthContext, call: ChannelCall, traced: Context | undefined): ChannelPlan {
    const span = traced && startSpan(traced, 'routing', { [REQUEST_ID_ATTRIBUTE]: req.requestId, 'modelgate.model': call.model, 'modelgate.group': auth.group });
    try {
      checkAllowLists(auth, call.model, req.ip);
      return this.deps.channels.plan(call.surface, auth.group, call.model);
    } catch (err) {
      if (span) failSpan(span, err);
      throw err;
    } finally {
      span?.end();
    }
  }

  /** Tries channels in routing order; retries only failures that happened before the client got a byte. */
  private async attempt(
    plan: ChannelPlan,
    call: ChannelCall,
    res: CallerResponse,
    signal: CallerSignal,
    startedAt: number,
    trace: CallTrace,
    traced: Context | undefined,
  ): Promise<{ channel: ChannelRecord; series: UpstreamSeries; delivery: Delivery }> {
    const attempts = 1 + this.deps.options.values.RetryTimes;
    let lastError: Error | undefined;
    let previous: UpstreamSeries | undefined;
    // Channels already asked again after their cached credential was refused (once each).
    const reauthorized = new Set<number>();
    for (let attempt = 0; attempt < attempts; attempt++) {
      const channel = plan.next();
      if (!channel) break;
      // Only a failed attempt leads to another one: the channel that failed counts the retry.
      previous?.retries.inc();
      const series = this.deps.metrics.upstream(channel.id, call.model);
      previous = series;
      const { provider } = channel;
      const upstreamModel = channel.modelMapping.get(call.model) ?? call.model;
      const local = call.answerLocally?.({ res, signal, startedAt, channel, upstreamModel, provider });
      if (local) return { channel, series, delivery: local };
      let request: UpstreamCall | undefined;
      // Until the answer is delivered (a stream's end included) or the attempt fails.
      const span = traced && startSpan(traced, 'upstream', {
        [REQUEST_ID_ATTRIBUTE]: trace.requestId,
        'modelgate.channel_id': channel.id,
        'modelgate.provider_type': channel.type,
        'modelgate.attempt': attempt + 1,
      });
      try {
        request = call.upstreamRequest(channel, upstreamModel, provider);
        if (provider.authorize) await provider.authorize(channel, request);
        const context = { res, signal, startedAt, channel, upstreamModel, provider, framing: request.framing };
        const sentAt = performance.now();
        // The provider continues the trace: every attempt passes here, signed requests too (traceparent is not signed).
        const headers = span ? { ...request.headers } : request.headers;
        if (span) injectTraceHeaders(span, headers);
        const sent = { origin: channel.origin, path: request.path, headers, body: request.body, signal };
        const upstream = call.stream ? await this.deps.upstream.post(sent) : await this.deps.upstream.postWhole(sent);
        series.latency.observe((performance.now() - sentAt) / 1000);
        span?.setAttribute('http.response.status_code', upstream.statusCode);
        if (upstream.statusCode < 200 || upstream.statusCode >= 300) {
          if (span) failSpan(span, upstream.statusCode);
          series.error(`http_${upstream.statusCode}`);
          const body = await readBody(upstream, signal, this.deps.upstream.maxBodyBytes).catch(() => EMPTY);
          if (upstream.statusCode === 401 && !reauthorized.has(channel.id) && provider.credentialRejected?.(channel, request)) {
            // A cached credential (an access token) went stale: the channel is asked again with a fresh one.
            if (signal.aborted) throw new ClientGone();
            reauthorized.add(channel.id);
            plan.again(channel);
            lastError = new UpstreamHttpError(401, provider.errorOf(body, upstream.headers), channel);
            continue;
          }
          lastError = await this.rejected(channel, provider, upstream.statusCode, upstream.headers, body, signal, trace);
          continue;
        }
        // For the access log (debug level): the channel that served the call.
        res.locals.channelId = channel.id;
        if (!call.stream) return { channel, series, delivery: await call.deliver(upstream, context) };
        this.deps.metrics.streamStarted();
        try {
          return { channel, series, delivery: await call.deliver(upstream, context) };
        } finally {
          this.deps.metrics.streamEnded();
        }
      } catch (err) {
        if (span) failSpan(span, err);
        if (err instanceof CredentialRefused) {
          series.error('credential_refused');
          lastError = await this.credentialRefused(channel, err, trace);
          continue;
        }
        if (!(err instanceof UpstreamFailure)) throw err;
        if (err.kind === 'aborted' || signal.aborted) throw new ClientGone();
        // The client's upload broke (too large, malformed): the client's failure, not the channel's.
        const uploadFailure = request && isStreamedBody(request.body) ? request.body.failure() : undefined;
        if (uploadFailure) throw uploadFailure;
        series.error(err.kind);
        this.deps.logger.warn({ ...trace, channelId: channel.id, failure: err.kind }, 'upstream attempt failed');
        if (err.kind === 'timeout') throw new AppError('upstream_timeout', 'the upstream did not answer in time');
        this.deps.channels.coolDown(channel.id);
        lastError = new AppError('upstream_error', `the upstream failed on every attempt (last: ${err.message})`);
      } finally {
        span?.end();
      }
    }
    throw lastError ?? new AppError('no_available_channel', `no channel is available for model ${call.model} right now`);
  }

  /**
   * A non-2xx answer: disables the channel when it is unusable (auto_ban), cools it down on a
   * transient failure and returns the error to retry with; throws what must reach the client as is.
   */
  private async rejected(
    channel: ChannelRecord,
    provider: Provider,
    status: number,
    headers: IncomingHttpHeaders,
    body: Buffer,
    signal: CallerSignal,
    trace: CallTrace,
  ): Promise<Error> {
    if (signal.aborted) throw new ClientGone();
    this.deps.logger.warn({ ...trace, channelId: channel.id, status }, 'upstream answered with an error');
    const error = provider.errorOf(body, headers);
    const reason = provider.disablingReason(status, error);
    if (reason && channel.autoBan) await this.disable(channel, reason, error?.message, trace);
    const relayed = new UpstreamHttpError(status, error, channel);
    // The channel itself is unusable (key refused, credit gone): says nothing of this request, which
    // another channel may serve; with none left the client gets this answer (docs/api.md 2.4).
    if (reason) {
      // auto_ban off: the channel stays in routing, behind the others for a while.
      if (!channel.autoBan) this.deps.channels.coolDown(channel.id);
      return relayed;
    }
    // A client error is this request's own; a redirect (a base URL that moved), like a server error,
    // is the channel's failure, retried elsewhere and never relayed as is.
    if (status >= 400 && status < 500 && status !== 429) throw relayed;
    this.deps.channels.coolDown(channel.id);
    return status === 429 ? relayed : new UpstreamExhaustedError(relayed);
  }

  /**
   * The credential was refused before the request went out (a token exchange): the channel cannot
   * be used, as after an upstream 401 (docs/api.md 2.4, 2.12); another channel may serve the call.
   */
  private async credentialRefused(channel: ChannelRecord, refusal: CredentialRefused, trace: CallTrace): Promise<Error> {
    if (channel.autoBan) await this.disable(channel, 'the credential was refused', refusal.message, trace);
    else this.deps.channels.coolDown(channel.id);
    return new UpstreamHttpError(401, { message: refusal.message }, channel);
  }

  /** auto_ban: status 3 with reason and time in the database, out of routing here and (via pub/sub) everywhere. */
  private async disable(channel: ChannelRecord, reason: string, upstreamMessage: unknown, trace: CallTrace): Promise<void> {
    const detail = typeof upstreamMessage === 'string' ? `${reason}: ${maskUpstreamText(upstreamMessage, channel)}` : reason;
    this.deps.channels.markDisabled(channel.id);
    try {
      if (await this.deps.channelRepository.disableAutomatically(channel.id, detail)) {
        this.deps.logger.warn({ ...trace, channelId: channel.id, reason }, 'channel disabled automatically');
        await this.deps.publish({ kind: 'channels' });
      }
    } catch (err) {
      this.deps.logger.error({ ...trace, channelId: channel.id, err: describeError(err) }, 'could not record the disabled channel');
    }
  }

  /** First-byte time of a call that reached the client, and a stream the upstream broke midway. */
  private observeDelivery(series: UpstreamSeries, channel: ChannelRecord, delivery: Delivery, trace: CallTrace): void {
    if (delivery.firstByteMs !== null) series.firstByte.observe(delivery.firstByteMs / 1000);
    const failure = delivery.streamFailure;
    if (failure === undefined) return;
    series.error(failure.code === 'upstream_timeout' ? 'stream_timeout' : 'stream_error');
    this.deps.logger.warn({ ...trace, channelId: channel.id, failure: failure.code }, 'upstream stream failed after the first byte');
  }


  private async settle(
    req: CallerRequest,
    auth: AuthContext,
    account: BillingAccount,
    call: RelayCall,
    reserved: number,
    charge: SettledCharge,
    channel: ChannelRecord,
    delivery: Delivery,
    startedAt: number,
    traced: Context | undefined,
  ): Promise<void> {
    const { promptTokens, completionTokens, cachedTokens, cacheWriteTokens, reasoningTokens } = delivery.usage;
    // Untraced, no field: the entry queued in Redis stays as it was.
    const trace = traceHeadersOf(traced);
    const { quota } = charge;
    const now = Date.now();
    this.sequence += 1;
    await this.deps.balances.settle(account, reserved, {
      id: `${this.deps.balances.instanceId}:${this.sequence}`,
      userId: auth.user.id,
      username: auth.user.username,
      tokenId: auth.key.id,
      tokenName: auth.key.name,
      limitedToken: account.limitedToken,
      model: call.model,
      channelId: channel.id,
      quota,
      promptTokens,
      completionTokens,
      cachedTokens,
      cacheWriteTokens,
      reasoningTokens,
      useTimeMs: now - startedAt,
      firstByteMs: delivery.firstByteMs,
      isStream: call.stream,
      requestId: req.requestId,
      createdAt: now,
      group: auth.group,
      modelRatio: charge.modelRatio,
      completionRatio: charge.completionRatio,
      groupRatio: charge.groupRatio,
      cacheRatio: charge.cacheRatio,
      cacheCreationRatio: charge.cacheCreationRatio,
      tierAbovePromptTokens: charge.tierAbovePromptTokens,
      serverTools: charge.serverTools,
      media: charge.media,
      ...(trace && { trace }),
    });
    this.deps.metrics.charged(call.model, quota, promptTokens, completionTokens);
  }
}
