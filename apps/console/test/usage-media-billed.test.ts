import { mediaBilledText } from '../web/src/pages/usage/media-billed';

describe("a media row's billed quantities (docs/api.md 2.14)", () => {
  test('priced per unit: the quantity and the unit price', () => {
    expect(mediaBilledText({ images: 2, units: 2, unit: 'image', usd_per_unit: 0.04 })).toBe('2 images × USD 0.04 per image');
    expect(mediaBilledText({ characters: 1_234, units: 1.234, unit: '1k_characters', usd_per_unit: 0.015 })).toBe('1,234 characters × USD 0.015 per 1,000 characters');
    expect(mediaBilledText({ seconds: 61, units: 1.0167, unit: 'minute', usd_per_unit: 0.006 })).toBe('61 s × USD 0.006 per minute');
    expect(mediaBilledText({ requests: 1, units: 1, unit: 'request', usd_per_unit: 0.002 })).toBe('1 request × USD 0.002 per request');
  });

  test('images that counted more units than there were say so', () => {
    expect(mediaBilledText({ images: 1, units: 3, unit: 'image', usd_per_unit: 0.04 })).toBe('1 image = 3 units × USD 0.04 per image');
  });

  test('priced by tokens or free: the quantity alone', () => {
    expect(mediaBilledText({ model_ratio: 2.5, images: 1 })).toBe('1 image');
    expect(mediaBilledText({ requests: 3 })).toBe('3 requests');
  });

  test('nothing for rows of other calls or values of another type', () => {
    expect(mediaBilledText({ model_ratio: 0.075, completion_ratio: 4 })).toBeUndefined();
    expect(mediaBilledText({})).toBeUndefined();
    expect(mediaBilledText({ images: '2', unit: 'image' })).toBeUndefined();
    expect(mediaBilledText({ seconds: 30, unit: 'constructor', usd_per_unit: 1 })).toBe('30 s');
  });
});
