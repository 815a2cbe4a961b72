import { type BudgetPeriod, periodSpanAt, type PeriodSpan } from '@modelgate/schemas';

/** The current span of each period, worked out again only once it ends (read on every budgeted call). */
export class CurrentPeriods {
  private readonly spans = new Map<BudgetPeriod, PeriodSpan>();

  span(period: BudgetPeriod, now = Date.now()): PeriodSpan {
    let span = this.spans.get(period);
    if (span === undefined || now >= span.end || now < span.start) {
      span = periodSpanAt(period, now);
      this.spans.set(period, span);
    }
    return span;
  }
}
