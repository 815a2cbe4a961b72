import type { ChannelView } from '@modelgate/schemas/api';
import {
  channelFormDefaults,
  channelFormSchema,
  channelStatusOf,
  channelTypeLabel,
  createBodyOf,
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
    const parsed = channelFormSchema(true).safeParse(channelFormDefaults());
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual(['key', 'models', 'name']);
    const values = channelFormSchema(true).parse({ ...channelFormDefaults(), name: 'up', key: 'sk-1', models: ' a , b,a ', base_url: 'http://127.0.0.1:9/' });
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
    const values = channelFormSchema(false).parse(defaults);
    const body = updateBodyOf(channel.id, values);
    expect(body).not.toHaveProperty('key');
    expect(body).toMatchObject({ id: 7, models: channel.models, groups: channel.groups, model_mapping: channel.model_mapping, settings: { responses: 'chat' } });
    expect(updateBodyOf(channel.id, { ...values, key: 'sk-new' })).toMatchObject({ key: 'sk-new' });
  });

  test('settings follow the type: only type 1 has the Responses mode', () => {
    expect(settingsOf(1, 'chat')).toEqual({ responses: 'chat' });
    expect(settingsOf(14, 'chat')).toEqual({});
    expect(settingsOf(24, 'native')).toEqual({});
    const values = channelFormSchema(false).parse({ ...channelFormDefaults(channel), type: 14 });
    expect(updateBodyOf(channel.id, values).settings).toEqual({});
  });

  test('a model mapping that is not a JSON object of names is refused with the reason', () => {
    const parsed = channelFormSchema(false).safeParse({ ...channelFormDefaults(channel), model_mapping: '{"a": 1}' });
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['model_mapping'], message: expect.stringContaining('"a"') });
  });

  test('type labels and status badges', () => {
    expect([1, 14, 24, 99].map(channelTypeLabel)).toEqual(['OpenAI-compatible', 'Anthropic', 'Gemini', 'Type 99']);
    expect([1, 2, 3].map((status) => channelStatusOf(status).label)).toEqual(['Enabled', 'Disabled', 'Auto-disabled']);
  });
});
