import { ALL_LOG_TYPES } from '@modelgate/schemas/api';
import {
  exportFileName,
  filtersFromSearch,
  formatDuration,
  formatSignedQuota,
  logQueryOf,
  logTypeLabel,
  pageFromSearch,
  searchOfFilters,
} from '../web/src/pages/usage/log-filters';

describe('usage filters in the address bar', () => {
  it('round-trips type, model, key, time range and page', () => {
    const filters = { type: 2, model: 'gpt-4o-mini', key: 'laptop', from: 1_795_046_400, to: 1_795_132_799 };
    const search = searchOfFilters(filters, 3);
    expect(search.toString()).toBe('type=2&model=gpt-4o-mini&key=laptop&from=1795046400&to=1795132799&p=3');
    expect(filtersFromSearch(search)).toEqual(filters);
    expect(pageFromSearch(search)).toBe(3);
  });

  it('leaves defaults out, and reads absent or unreadable parameters as no filter', () => {
    expect(searchOfFilters({ type: ALL_LOG_TYPES, model: '', key: '' }).toString()).toBe('');
    expect(filtersFromSearch(new URLSearchParams('type=99&from=yesterday&to=-5&model=%20x%20&p=0'))).toEqual({ type: ALL_LOG_TYPES, model: 'x', key: '', from: undefined, to: undefined });
    expect(pageFromSearch(new URLSearchParams('p=abc'))).toBe(1);
  });

  it('sends only the filters that are set to the API', () => {
    expect(logQueryOf({ type: ALL_LOG_TYPES, model: '', key: '' })).toEqual({ type: undefined, model_name: undefined, token_name: undefined, start_timestamp: undefined, end_timestamp: undefined });
    expect(logQueryOf({ type: 1, model: 'm', key: 'k', from: 5, to: 9 })).toEqual({ type: 1, model_name: 'm', token_name: 'k', start_timestamp: 5, end_timestamp: 9 });
  });
});

describe('log row formatting', () => {
  it('names log types, unknown ones by number', () => {
    expect(logTypeLabel(1)).toBe('Top-up');
    expect(logTypeLabel(2)).toBe('Consume');
    expect(logTypeLabel(42)).toBe('Type 42');
  });

  it('shows quota signed in USD', () => {
    expect(formatSignedQuota(2_500_000, 500_000)).toBe('+$5.00');
    expect(formatSignedQuota(-600, 500_000)).toBe('-$0.0012');
    expect(formatSignedQuota(0, 500_000)).toBe('$0.00');
  });

  it('shows durations in ms below a second, else in seconds', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_340)).toBe('12.3 s');
  });

  it('names the CSV download after the UTC time', () => {
    expect(exportFileName(new Date(Date.UTC(2026, 10, 25, 15, 30, 5, 123)))).toBe('modelgate-usage-20261125T153005Z.csv');
  });
});
