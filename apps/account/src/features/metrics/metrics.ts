import { createServiceMetrics, type ServiceMetrics, type ServiceMetricsOptions } from '@modelgate/http';
import { Counter } from 'prom-client';

/**
 * What became of a webhook delivery: `stored` (new event in the inbox), `duplicate` (already
 * there), `rejected` (400: unsigned, bad signature, not an event), `unavailable` (503: database
 * down or no webhook secret configured; the provider delivers again).
 */
export type WebhookOutcome = 'stored' | 'duplicate' | 'rejected' | 'unavailable';
const WEBHOOK_OUTCOMES: readonly WebhookOutcome[] = ['stored', 'duplicate', 'rejected', 'unavailable'];

/** The account service's Prometheus series: HTTP requests and payment webhook deliveries. */
export interface AccountMetrics {
  service: ServiceMetrics;
  webhookReceived(outcome: WebhookOutcome): void;
}

export function createAccountMetrics(options: ServiceMetricsOptions = {}): AccountMetrics {
  const service = createServiceMetrics('account', options);
  const received = new Counter({
    name: 'account_webhook_events_received_total',
    help: 'Payment webhook deliveries, by provider and outcome (stored, duplicate, rejected, unavailable)',
    labelNames: ['provider', 'outcome'] as const,
    registers: [service.registry],
  });
  const byOutcome = new Map(WEBHOOK_OUTCOMES.map((outcome) => [outcome, received.labels('stripe', outcome)]));
  // Every outcome is exported from the first scrape, at 0 until it happens (so rate() sees its start).
  for (const child of byOutcome.values()) child.inc(0);
  return {
    service,
    webhookReceived(outcome) {
      byOutcome.get(outcome)!.inc();
    },
  };
}
