import {
  CountedCounter,
  CountedHistogram,
  createServiceMetrics,
  type CounterSeries,
  type HistogramSeries,
  type ServiceMetrics,
  type ServiceMetricsOptions,
} from '@modelgate/http';
import { CHANNEL_STATUS } from '@modelgate/schemas';
import { Gauge } from 'prom-client';
import type { LedgerCounts } from '../billing/ledger-writer';
import type { ChannelState } from '../channels/channel-cache';
import type { LimitKind } from '../keys/limits';
import type { UpstreamFailureKind } from '../upstream/client';

/** Seconds, from a fast local channel (a few ms) to a long generation (minutes). */
const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

/**
 * Why an upstream attempt failed: how the connection failed, `http_<status>` for a non-2xx answer,
 * or `stream_error` / `stream_timeout` for a stream that broke after the client got its first byte.
 */
export type UpstreamErrorReason = Exclude<UpstreamFailureKind, 'aborted'> | `http_${number}` | 'stream_error' | 'stream_timeout' | 'credential_refused';

/** The series of one (channel, model) pair, bound once: observing costs no label lookup. */
export class UpstreamSeries {
  private readonly errorChildren = new Map<UpstreamErrorReason, CounterSeries<'channel' | 'model' | 'reason'>>();

  constructor(
    private readonly metrics: RelayMetricFamilies,
    private readonly channel: string,
    private readonly model: string,
    readonly latency: HistogramSeries<'channel' | 'model'>,
    readonly firstByte: HistogramSeries<'channel' | 'model'>,
    readonly retries: CounterSeries<'channel' | 'model'>,
  ) {}

  error(reason: UpstreamErrorReason): void {
    let child = this.errorChildren.get(reason);
    if (child === undefined) {
      child = this.metrics.upstreamErrors.labels({ channel: this.channel, model: this.model, reason });
      this.errorChildren.set(reason, child);
    }
    child.inc();
  }
}

interface ModelSeries {
  quota: CounterSeries<'model'>;
  promptTokens: CounterSeries<'model' | 'type'>;
  completionTokens: CounterSeries<'model' | 'type'>;
}

/** The `status` label of `relay_channel_status`, by channel status. */
const CHANNEL_STATUS_LABELS = new Map<number, string>([
  [CHANNEL_STATUS.enabled, 'enabled'],
  [CHANNEL_STATUS.manuallyDisabled, 'disabled'],
  [CHANNEL_STATUS.autoDisabled, 'auto_disabled'],
]);

/** What the state gauges read at scrape time (never on a request). */
export interface RelayStateSources {
  /** One Redis round trip. */
  ledgerCounts(): Promise<LedgerCounts>;
  /** From the channel cache, in memory. */
  channels(): Iterable<ChannelState>;
}

/** Counted in plain numbers, handed to prom-client when scraped: they are counted on every call. */
interface RelayMetricFamilies {
  upstreamLatency: CountedHistogram<'channel' | 'model'>;
  firstByte: CountedHistogram<'channel' | 'model'>;
  upstreamErrors: CountedCounter<'channel' | 'model' | 'reason'>;
  upstreamRetries: CountedCounter<'channel' | 'model'>;
  quotaCharged: CountedCounter<'model'>;
  tokens: CountedCounter<'model' | 'type'>;
  limitRefusals: CountedCounter<'kind'>;
}

/**
 * The relay's Prometheus series: HTTP requests, and per channel and model the upstream latency,
 * first-byte time, errors and retries; per model the quota charged and the tokens billed.
 * Labels are the channel id and the model the client asked for (only models some channel serves
 * get this far), so the series stay as few as the configured channels and models.
 */
export class RelayMetrics {
  readonly service: ServiceMetrics;
  private readonly families: RelayMetricFamilies;
  private readonly byChannel = new Map<number, Map<string, UpstreamSeries>>();
  private readonly byModel = new Map<string, ModelSeries>();
  /** A plain count on the hot path; the gauge reads it at scrape time. */
  private streams = 0;
  private readonly refusals = new Map<LimitKind, CounterSeries<'kind'>>();

  constructor(options: ServiceMetricsOptions = {}) {
    this.service = createServiceMetrics('relay', options);
    const registers = [this.service.registry];
    this.families = {
      upstreamLatency: new CountedHistogram({
        name: 'relay_upstream_latency_seconds',
        help: 'Time from sending a request to a model provider until its response headers arrived, per attempt',
        labelNames: ['channel', 'model'] as const,
        buckets: UPSTREAM_BUCKETS,
        registers,
      }),
      firstByte: new CountedHistogram({
        name: 'relay_first_byte_seconds',
        help: "Time from receiving a client's request until its first response byte was sent (successful calls)",
        labelNames: ['channel', 'model'] as const,
        buckets: UPSTREAM_BUCKETS,
        registers,
      }),
      upstreamErrors: new CountedCounter({
        name: 'relay_upstream_errors_total',
        help: 'Failed upstream attempts, by reason (connect, reset, timeout, other, http_<status>, stream_error, stream_timeout)',
        labelNames: ['channel', 'model', 'reason'] as const,
        registers,
      }),
      upstreamRetries: new CountedCounter({
        name: 'relay_upstream_retries_total',
        help: 'Failed upstream attempts that were retried on another channel (labelled with the channel that failed)',
        labelNames: ['channel', 'model'] as const,
        registers,
      }),
      quotaCharged: new CountedCounter({
        name: 'relay_quota_charged_total',
        help: 'Quota units charged to users for relayed calls',
        labelNames: ['model'] as const,
        registers,
      }),
      tokens: new CountedCounter({
        name: 'relay_tokens_total',
        help: 'Tokens billed for relayed calls, by type (prompt, completion)',
        labelNames: ['model', 'type'] as const,
        registers,
      }),
      limitRefusals: new CountedCounter({
        name: 'relay_limit_refusals_total',
        help: "Calls refused by a key's or a group's limits or a key's budget, by kind (requests, tokens, concurrency, budget)",
        labelNames: ['kind'] as const,
        registers,
      }),
    };
  }

  /**
   * Gauges computed at scrape time, nothing per request: the ledger's backlog and dead letters (one
   * Redis round trip per scrape; left out rather than stale when Redis cannot answer), streams in
   * flight and each channel's status.
   */
  observeState(sources: RelayStateSources): void {
    const registers = [this.service.registry];
    // Both ledger gauges are collected at once in a scrape: one read serves them.
    let reading: Promise<LedgerCounts | undefined> | undefined;
    const readLedger = () =>
      (reading ??= sources.ledgerCounts().catch(() => undefined).finally(() => {
        reading = undefined;
      }));
    const ledgerGauge = (name: string, help: string, pick: (counts: LedgerCounts) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const counts = await readLedger();
          if (counts) this.set(pick(counts));
          else this.reset();
        },
      });
    ledgerGauge(
      'relay_ledger_backlog',
      'Settled charges queued in Redis and not yet written to PostgreSQL, for the whole deployment (every relay reports the same)',
      (counts) => counts.backlog,
    );
    ledgerGauge(
      'relay_ledger_dead_letters',
      'Charges PostgreSQL refused for their data, set aside uncharged in the dead-letter list for an operator',
      (counts) => counts.deadLetters,
    );
    const streamsNow = () => this.streams;
    new Gauge({
      name: 'relay_streams_in_flight',
      help: 'Streamed answers this relay is sending to clients now',
      registers,
      collect() {
        this.set(streamsNow());
      },
    });
    new Gauge({
      name: 'relay_channel_status',
      help: 'Channels by id, type and status (enabled, disabled, auto_disabled): 1 for the current status, 0 for the others',
      labelNames: ['channel', 'type', 'status'] as const,
      registers,
      collect() {
        this.reset();
        for (const channel of sources.channels()) {
          const current = CHANNEL_STATUS_LABELS.get(channel.status);
          const id = String(channel.id);
          for (const status of CHANNEL_STATUS_LABELS.values()) this.labels(id, channel.dialect, status).set(status === current ? 1 : 0);
        }
      },
    });
  }

  /** A streamed answer started reaching its client; `streamEnded` when it is over, however it ended. */
  streamStarted(): void {
    this.streams += 1;
  }

  streamEnded(): void {
    this.streams -= 1;
  }

  /** The upstream series of one channel serving one model. */
  upstream(channelId: number, model: string): UpstreamSeries {
    let byModel = this.byChannel.get(channelId);
    if (byModel === undefined) {
      byModel = new Map();
      this.byChannel.set(channelId, byModel);
    }
    let series = byModel.get(model);
    if (series === undefined) {
      const labels = { channel: String(channelId), model };
      const { upstreamLatency, firstByte, upstreamRetries } = this.families;
      series = new UpstreamSeries(
        this.families,
        labels.channel,
        model,
        upstreamLatency.labels(labels),
        firstByte.labels(labels),
        upstreamRetries.labels(labels),
      );
      byModel.set(model, series);
    }
    return series;
  }

  /** A call refused by a limit per key or group, or by a key's budget. */
  limitRefused(kind: LimitKind): void {
    let series = this.refusals.get(kind);
    if (series === undefined) {
      series = this.families.limitRefusals.labels({ kind });
      this.refusals.set(kind, series);
    }
    series.inc();
  }

  /** One settled charge. */
  charged(model: string, quota: number, promptTokens: number, completionTokens: number): void {
    let series = this.byModel.get(model);
    if (series === undefined) {
      const { quotaCharged, tokens } = this.families;
      series = {
        quota: quotaCharged.labels({ model }),
        promptTokens: tokens.labels({ model, type: 'prompt' }),
        completionTokens: tokens.labels({ model, type: 'completion' }),
      };
      this.byModel.set(model, series);
    }
    if (quota > 0) series.quota.inc(quota);
    if (promptTokens > 0) series.promptTokens.inc(promptTokens);
    if (completionTokens > 0) series.completionTokens.inc(completionTokens);
  }
}
