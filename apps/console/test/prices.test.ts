import { ratiosFromUsdPer1M } from '@modelgate/schemas/pricing';
import { pricesOfRatios } from '../web/src/lib/prices';

describe('prices in USD per 1M tokens and the ratios they are saved as', () => {
  it('reads ratios as USD per 1M tokens (ratio 1 = USD 2)', () => {
    expect(pricesOfRatios({ modelRatio: 1, completionRatio: 1, cacheRatio: 1, cacheCreationRatio: 1 })).toEqual({ input: 2, cachedInput: 2, cacheWrite: 2, output: 2 });
    // gpt-4o-mini: USD 0.15 in, 0.075 cached, 0.60 out.
    expect(pricesOfRatios({ modelRatio: 0.075, completionRatio: 4, cacheRatio: 0.5, cacheCreationRatio: 1 })).toEqual({ input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, output: 0.6 });
  });

  it('saves typed prices as the ratios that read back as the same prices', () => {
    const typed = [
      { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
      { input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, output: 0.6 },
      { input: 1.25, cachedInput: 0.125, cacheWrite: 1.25, output: 10 },
      { input: 0.1, cachedInput: 0.025, cacheWrite: 0.1, output: 0.4 },
      { input: 2, cachedInput: 2, cacheWrite: 2, output: 2 },
      { input: 0.3, cachedInput: 0.03, cacheWrite: 0.3, output: 2.5 },
      { input: 0.000001, cachedInput: 0, cacheWrite: 0.000002, output: 0.000003 },
      { input: 123456.789, cachedInput: 0.1, cacheWrite: 99999.5, output: 250000 },
      { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 },
    ];
    for (const prices of typed) expect(pricesOfRatios(ratiosFromUsdPer1M(prices))).toEqual(prices);
    // Without float noise: 0.6 / 0.15 is stored as 4, 0.3 / 3 as 0.1.
    expect(ratiosFromUsdPer1M({ input: 0.15, cachedInput: 0.03, cacheWrite: 0.15, output: 0.6 })).toEqual({ modelRatio: 0.075, completionRatio: 4, cacheRatio: 0.2, cacheCreationRatio: 1 });
    expect(ratiosFromUsdPer1M({ input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 })).toEqual({ modelRatio: 1.5, completionRatio: 5, cacheRatio: 0.1, cacheCreationRatio: 1.25 });
  });

  it('keeps a free model free: every ratio relative to a zero input price stays 1', () => {
    expect(ratiosFromUsdPer1M({ input: 0, cachedInput: 0, cacheWrite: 0, output: 0 })).toEqual({ modelRatio: 0, completionRatio: 1, cacheRatio: 1, cacheCreationRatio: 1 });
  });
});
