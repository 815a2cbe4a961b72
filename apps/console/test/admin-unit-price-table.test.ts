import { OPTION_DEFINITIONS, type OptionValues, parseOptions } from '@modelgate/schemas/options';
import { PRICE_MESSAGE } from '../web/src/pages/admin/prices/price-table';
import { changedModelPriceOption, readUnitDraft, unitDraftOf, unitPriceRowsOf } from '../web/src/pages/admin/prices/unit-price-table';

/** Options as GET /api/option answers them, with `modelPrice` as the stored ModelPrice map. */
function optionsWith(modelPrice: Record<string, number>): OptionValues {
  const rows = Object.entries(OPTION_DEFINITIONS)
    .filter(([, definition]) => !definition.secret)
    .map(([key, definition]) => ({ key, value: key === 'ModelPrice' ? JSON.stringify(modelPrice) : definition.default }));
  return parseOptions(rows);
}

const stored = optionsWith({ 'whisper-1': 0.006, 'dall-e-3': 0.04, 'my-reranker': 0.001 });

describe('unit price rows of ModelPrice (docs/api.md 2.14)', () => {
  test('every model, sorted, in USD per unit', () => {
    expect(unitPriceRowsOf(stored)).toEqual([
      { model: 'dall-e-3', usd: 0.04 },
      { model: 'my-reranker', usd: 0.001 },
      { model: 'whisper-1', usd: 0.006 },
    ]);
  });

  test('the table read back unchanged changes nothing, the defaults included', () => {
    expect(changedModelPriceOption(stored, unitPriceRowsOf(stored))).toBeUndefined();
    const defaults = optionsWith(JSON.parse(OPTION_DEFINITIONS.ModelPrice.default) as Record<string, number>);
    expect(changedModelPriceOption(defaults, unitPriceRowsOf(defaults))).toBeUndefined();
  });

  test('a change keeps the stored order, an added model follows, a removed one leaves', () => {
    const rows = [
      ...unitPriceRowsOf(stored).filter((row) => row.model !== 'my-reranker').map((row) => (row.model === 'dall-e-3' ? { ...row, usd: 0.08 } : row)),
      { model: 'tts-1', usd: 0.015 },
    ];
    expect(changedModelPriceOption(stored, rows)).toEqual({ key: 'ModelPrice', value: JSON.stringify({ 'whisper-1': 0.006, 'dall-e-3': 0.08, 'tts-1': 0.015 }) });
    expect(changedModelPriceOption(stored, [])).toEqual({ key: 'ModelPrice', value: '{}' });
  });
});

describe('reading a typed unit price', () => {
  test('a decimal price and a valid, new model name', () => {
    expect(readUnitDraft({ model: ' tts-1 ', usd: '.015' }, new Set(['dall-e-3']))).toEqual({ row: { model: 'tts-1', usd: 0.015 }, errors: {} });
    expect(unitDraftOf({ model: 'tts-1', usd: 0.015 })).toEqual({ model: 'tts-1', usd: '0.015' });
  });

  test('refuses a negative, empty or non-numeric price, and a taken or reserved name', () => {
    for (const usd of ['-1', '', 'abc', '1e-3']) expect(readUnitDraft({ model: 'm', usd }, new Set()).errors).toEqual({ usd: PRICE_MESSAGE });
    expect(readUnitDraft({ model: 'dall-e-3', usd: '1' }, new Set(['dall-e-3'])).errors).toEqual({ model: 'dall-e-3 is already in the table' });
    expect(readUnitDraft({ model: 'constructor', usd: '1' }, new Set()).errors.model).toMatch(/Object.prototype/);
    expect(readUnitDraft({ model: '', usd: '1' }, new Set()).row).toBeUndefined();
  });
});
