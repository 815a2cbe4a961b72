import { OPTION_DEFINITIONS, type OptionValues, parseOptions } from '@modelgate/schemas/options';
import {
  changedRatioOptions,
  draftOf,
  priceRowsOf,
  ratioMapsOfRows,
  readDraft,
  ZERO_INPUT_MESSAGE,
} from '../web/src/pages/admin/prices/price-table';

/** Options as GET /api/option answers them: every non-secret key, here with small ratio maps. */
function optionsWith(maps: Partial<Record<'ModelRatio' | 'CompletionRatio' | 'CacheRatio' | 'CacheCreationRatio', Record<string, number>>>): OptionValues {
  const rows = Object.entries(OPTION_DEFINITIONS)
    .filter(([, definition]) => !definition.secret)
    .map(([key, definition]) => ({ key, value: definition.default }));
  for (const [key, map] of Object.entries(maps)) {
    const row = rows.find((entry) => entry.key === key);
    if (row) row.value = JSON.stringify(map);
  }
  return parseOptions(rows);
}

const stored = optionsWith({
  ModelRatio: { 'gpt-4o-mini': 0.075, 'claude-sonnet-4-5': 1.5, 'free-model': 0 },
  CompletionRatio: { 'gpt-4o-mini': 4, 'claude-sonnet-4-5': 5, orphan: 3 },
  CacheRatio: { 'gpt-4o-mini': 0.5, 'claude-sonnet-4-5': 0.1 },
  CacheCreationRatio: {},
});

describe('price rows of the ratio options', () => {
  test('every model of ModelRatio, sorted, in USD per 1M with unset ratios at their defaults', () => {
    expect(priceRowsOf(stored)).toEqual([
      { model: 'claude-sonnet-4-5', prices: { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 } },
      { model: 'free-model', prices: { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 } },
      { model: 'gpt-4o-mini', prices: { input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, output: 0.6 } },
    ]);
  });

  test('the table read back unchanged changes no option', () => {
    const rows = priceRowsOf(stored);
    expect(changedRatioOptions(stored, ratioMapsOfRows(stored, rows))).toEqual([]);
  });

  test('a changed model gets an entry in each map; others keep theirs as stored', () => {
    const rows = priceRowsOf(stored).map((row) => (row.model === 'gpt-4o-mini' ? { ...row, prices: { ...row.prices, cachedInput: 0.015 } } : row));
    const maps = ratioMapsOfRows(stored, rows);
    // ModelRatio and CompletionRatio are set to the values they had: their text does not change.
    expect(changedRatioOptions(stored, maps)).toEqual([
      { key: 'CacheRatio', value: JSON.stringify({ 'gpt-4o-mini': 0.1, 'claude-sonnet-4-5': 0.1 }) },
      { key: 'CacheCreationRatio', value: JSON.stringify({ 'gpt-4o-mini': 1 }) },
    ]);
    expect(maps.ModelRatio.get('gpt-4o-mini')).toBe(0.075);
    expect(maps.CompletionRatio.get('gpt-4o-mini')).toBe(4);
  });

  test('a new model is added to all four maps and a removed one leaves them; unknown entries stay', () => {
    const rows = [
      ...priceRowsOf(stored).filter((row) => row.model !== 'claude-sonnet-4-5'),
      { model: 'local-llm', prices: { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 4 } },
    ];
    const changes = Object.fromEntries(changedRatioOptions(stored, ratioMapsOfRows(stored, rows)).map((change) => [change.key, JSON.parse(change.value) as unknown]));
    expect(changes).toEqual({
      ModelRatio: { 'gpt-4o-mini': 0.075, 'free-model': 0, 'local-llm': 0.5 },
      CompletionRatio: { 'gpt-4o-mini': 4, orphan: 3, 'local-llm': 4 },
      CacheRatio: { 'gpt-4o-mini': 0.5, 'local-llm': 0.1 },
      CacheCreationRatio: { 'local-llm': 1.25 },
    });
  });

  test('a removed model leaves ModelRatio first, an added one enters it last', () => {
    const rows = [
      ...priceRowsOf(stored).filter((row) => row.model !== 'claude-sonnet-4-5'),
      { model: 'local-llm', prices: { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 4 } },
    ];
    const changes = changedRatioOptions(stored, ratioMapsOfRows(stored, rows)).map(({ key, value }) => [key, JSON.parse(value) as unknown]);
    expect(changes[0]).toEqual(['ModelRatio', { 'gpt-4o-mini': 0.075, 'free-model': 0 }]);
    expect(changes.slice(1, -1).map(([key]) => key)).toEqual(['CompletionRatio', 'CacheRatio', 'CacheCreationRatio']);
    expect(changes.at(-1)).toEqual(['ModelRatio', { 'gpt-4o-mini': 0.075, 'free-model': 0, 'local-llm': 0.5 }]);
    // Only a removal: one ModelRatio write, first.
    const fewer = changedRatioOptions(stored, ratioMapsOfRows(stored, priceRowsOf(stored).filter((row) => row.model !== 'free-model')));
    expect(fewer.map((change) => change.key)).toEqual(['ModelRatio']);
  });

  test('the default maps read back as their own table', () => {
    const defaults = optionsWith({});
    expect(changedRatioOptions(defaults, ratioMapsOfRows(defaults, priceRowsOf(defaults)))).toEqual([]);
  });
});

describe('reading a typed row', () => {
  const draft = { model: 'm', input: '0.15', cachedInput: '0.075', cacheWrite: '.15', output: '0.6' };

  test('decimal prices are read', () => {
    expect(readDraft(draft, new Set())).toEqual({ row: { model: 'm', prices: { input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, output: 0.6 } }, errors: {} });
    expect(draftOf({ model: 'm', prices: { input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, output: 0.6 } })).toEqual({ ...draft, cacheWrite: '0.15' });
  });

  test('negative, empty or non-numeric prices are refused', () => {
    expect(readDraft({ ...draft, input: '-1', output: '', cachedInput: 'abc' }, new Set()).errors).toEqual({
      input: expect.any(String),
      output: expect.any(String),
      cachedInput: expect.any(String),
    });
  });

  test('other prices above 0 with an input price of 0 cannot be ratios', () => {
    const result = readDraft({ ...draft, input: '0' }, new Set());
    expect(result.row).toBeUndefined();
    expect(result.errors).toEqual({ cachedInput: ZERO_INPUT_MESSAGE, cacheWrite: ZERO_INPUT_MESSAGE, output: ZERO_INPUT_MESSAGE });
    expect(readDraft({ model: 'm', input: '0', cachedInput: '0', cacheWrite: '0', output: '0' }, new Set()).row).toBeDefined();
  });

  test('model names: required, not taken, not reserved', () => {
    expect(readDraft({ ...draft, model: ' ' }, new Set()).errors.model).toBe('Enter a model name');
    expect(readDraft(draft, new Set(['m'])).errors.model).toBe('m is already in the table');
    expect(readDraft({ ...draft, model: 'constructor' }, new Set()).errors.model).toMatch(/Object.prototype/);
    expect(readDraft({ ...draft, model: ' m2 ' }, new Set(['m'])).row?.model).toBe('m2');
  });
});
