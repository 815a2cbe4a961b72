import type { ChannelView } from '@modelgate/schemas/api';
import {
  channelFormDefaults,
  channelFormSchema,
  channelStatusOf,
  channelTypeLabel,
  createBodyOf,
  movesStoredKey,
  settingsOf,
  updateBodyOf,
} from '../web/src/pages/admin/channels/channel-form';

const channel: ChannelView = {
  id: 7,
  type: 1,
  name: 'openai',
  base_url: 'https://proxy.example',
  models: 'gpt-4o-mini,gpt-4o',
  groups: 'default,vip',
  priority: 5,
  weight: 2,
  model_mapping: '{"gpt-4o-mini":"openai/gpt-4o-mini"}',
  status: 1,
  status_reason: '',
  status_changed_at: null,
  auto_ban: false,
  settings: { responses: 'chat' },
  used_quota: 0,
  response_time_ms: 0,
  tested_at: null,
  created_at: 1_764_000_000,
};

describe('channel form', () => {
  test('a new channel: OpenAI-compatible, group default, auto-disable on; the key is required', () => {
    const parsed = channelFormSchema().safeParse(channelFormDefaults());
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual(['key', 'models', 'name']);
    const values = channelFormSchema().parse({ ...channelFormDefaults(), name: 'up', key: 'sk-1', models: ' a , b,a ', base_url: 'http://127.0.0.1:9/' });
    expect(createBodyOf(values)).toEqual({
      name: 'up',
      type: 1,
      key: 'sk-1',
      base_url: 'http://127.0.0.1:9',
      models: 'a,b',
      groups: 'default',
      priority: 0,
      weight: 0,
      model_mapping: '',
      auto_ban: true,
      settings: { responses: 'native' },
    });
  });

  test('editing: the stored fields, an empty key (kept) and a readable mapping', () => {
    const defaults = channelFormDefaults(channel);
    expect(defaults).toMatchObject({ key: '', responses: 'chat', auto_ban: false, model_mapping: '{\n  "gpt-4o-mini": "openai/gpt-4o-mini"\n}' });
    const values = channelFormSchema(channel).parse(defaults);
    const body = updateBodyOf(channel.id, values);
    expect(body).not.toHaveProperty('key');
    expect(body).toMatchObject({ id: 7, models: channel.models, groups: channel.groups, model_mapping: channel.model_mapping, settings: { responses: 'chat' } });
    expect(updateBodyOf(channel.id, { ...values, key: 'sk-new' })).toMatchObject({ key: 'sk-new' });
  });

  test('editing: a new base URL or type needs the key again, the same address written differently does not', () => {
    const defaults = channelFormDefaults(channel);
    for (const edit of [{ base_url: 'https://elsewhere.example' }, { base_url: '' }, { type: 14 as const }]) {
      const values = { ...defaults, ...edit };
      expect(movesStoredKey(channel, values)).toBe(true);
      const parsed = channelFormSchema(channel).safeParse(values);
      expect(parsed.error?.issues).toEqual([expect.objectContaining({ path: ['key'], message: 'Enter the key for the new address' })]);
      expect(updateBodyOf(channel.id, channelFormSchema(channel).parse({ ...values, key: 'sk-new' }))).toMatchObject({ ...edit, key: 'sk-new' });
    }
    const sameAddress = { ...defaults, base_url: 'https://proxy.example/' };
    expect(movesStoredKey(channel, sameAddress)).toBe(false);
    expect(channelFormSchema(channel).safeParse(sameAddress).success).toBe(true);
    // '' is the type's default: writing the default out is the same address.
    const unnamed = { ...channel, type: 24, base_url: '' };
    expect(movesStoredKey(unnamed, { type: 24, base_url: 'https://generativelanguage.googleapis.com' })).toBe(false);
    expect(movesStoredKey(undefined, { type: 14, base_url: 'https://elsewhere.example' })).toBe(false);
  });

  test('settings follow the type: only type 1 has the Responses mode', () => {
    expect(settingsOf(1, 'chat')).toEqual({ responses: 'chat' });
    expect(settingsOf(14, 'chat')).toEqual({});
    expect(settingsOf(24, 'native')).toEqual({});
    const values = channelFormSchema(channel).parse({ ...channelFormDefaults(channel), type: 14, key: 'sk-anthropic' });
    expect(updateBodyOf(channel.id, values).settings).toEqual({});
  });

  test('a model mapping that is not a JSON object of names is refused with the reason', () => {
    const parsed = channelFormSchema(channel).safeParse({ ...channelFormDefaults(channel), model_mapping: '{"a": 1}' });
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['model_mapping'], message: expect.stringContaining('"a"') });
  });

  test('type labels and status badges', () => {
    expect([1, 14, 24, 99].map(channelTypeLabel)).toEqual(['OpenAI-compatible', 'Anthropic', 'Gemini', 'Type 99']);
    expect([1, 2, 3].map((status) => channelStatusOf(status).label)).toEqual(['Enabled', 'Disabled', 'Auto-disabled']);
  });
});
