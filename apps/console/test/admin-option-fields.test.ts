import { editableText, OPTION_FIELDS, OPTION_SECTIONS, optionKeysOf } from '../web/src/pages/admin/options/option-fields';
import { OPTION_DEFINITIONS, OPTION_KEYS } from '@modelgate/schemas/options';

describe('option fields', () => {
  test('every option is in exactly one section, and secrets are exactly the write-only fields', () => {
    expect(OPTION_SECTIONS.flatMap(optionKeysOf).sort()).toEqual([...OPTION_KEYS].sort());
    for (const key of OPTION_KEYS) expect([key, OPTION_FIELDS[key].control === 'secret']).toEqual([key, OPTION_DEFINITIONS[key].secret]);
  });

  test('ratio maps are indented for editing; other text is kept as stored', () => {
    expect(editableText('ratio-map', '{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(editableText('ratio-map', 'not json')).toBe('not json');
    expect(editableText('integer', '007')).toBe('007');
  });
});
