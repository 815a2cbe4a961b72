import { generateKeyPairSync } from 'node:crypto';
import { ApiError } from '@modelgate/client';
import type { ChannelView } from '@modelgate/schemas/api';
import {
  baseUrlFieldOf,
  channelFormDefaults,
  channelFormSchema,
  channelStatusOf,
  channelTypeLabel,
  createBodyOf,
  movesStoredKey,
  readKeyFile,
  serverFieldError,
  serviceAccountOf,
  settingFieldsOf,
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

  test('settings follow the type: only type 1 has the Responses mode, empty texts are left out', () => {
    const values = { responses: 'chat', api_version: ' 2025-04-01-preview ', region: 'us-east-1', project_id: '' } as const;
    expect(settingsOf(1, values)).toEqual({ responses: 'chat' });
    expect(settingsOf(14, values)).toEqual({});
    expect(settingsOf(24, values)).toEqual({});
    expect(settingsOf(3, values)).toEqual({ api_version: '2025-04-01-preview' });
    expect(settingsOf(33, values)).toEqual({ region: 'us-east-1' });
    expect(settingsOf(41, values)).toEqual({ region: 'us-east-1' });
    expect(settingsOf(41, { ...values, region: '', project_id: 'my-project' })).toEqual({ project_id: 'my-project' });
    const edited = channelFormSchema(channel).parse({ ...channelFormDefaults(channel), type: 14, key: 'sk-anthropic', region: 'us-east-1' });
    expect(updateBodyOf(channel.id, edited).settings).toEqual({});
  });

  test('a model mapping that is not a JSON object of names is refused with the reason', () => {
    const parsed = channelFormSchema(channel).safeParse({ ...channelFormDefaults(channel), model_mapping: '{"a": 1}' });
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['model_mapping'], message: expect.stringContaining('"a"') });
  });

  test('type labels and status badges', () => {
    expect([1, 3, 14, 24, 33, 41, 99].map(channelTypeLabel)).toEqual(['OpenAI-compatible', 'Azure OpenAI', 'Anthropic', 'Gemini', 'AWS Bedrock', 'Google Vertex AI', 'Type 99']);
    expect([1, 2, 3].map((status) => channelStatusOf(status).label)).toEqual(['Enabled', 'Disabled', 'Auto-disabled']);
  });
});

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

/** A key file of the form Google issues (the key is a real RSA key, the account made up). */
function serviceAccountKeyFile(fields: Record<string, string> = {}): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: 'unit-project',
    private_key_id: '0123456789abcdef',
    private_key: privateKey,
    client_email: 'relay@unit-project.iam.gserviceaccount.com',
    client_id: '100000000000000000001',
    token_uri: 'https://oauth2.googleapis.com/token',
    ...fields,
  }, null, 2);
}

/** The form's values for a new channel of `type`, named and with one model. */
function newChannel(type: number, fields: Partial<ReturnType<typeof channelFormDefaults>> = {}) {
  return { ...channelFormDefaults(), name: 'cloud', models: 'm-1', type, ...fields };
}

function issuesOf(values: unknown, edited?: ChannelView): Record<string, string> {
  const parsed = channelFormSchema(edited).safeParse(values);
  return Object.fromEntries((parsed.error?.issues ?? []).map((issue) => [issue.path.join('.'), issue.message]));
}

describe('channel form: cloud types (docs/api.md 2.12)', () => {
  test('each type shows exactly the settings it declares, with its examples', () => {
    expect(settingFieldsOf(1)).toEqual([]);
    expect(settingFieldsOf(14)).toEqual([]);
    expect(settingFieldsOf(3)).toEqual([{ key: 'api_version', label: 'API version', placeholder: '2024-10-21', hint: expect.stringContaining('2024-10-21'), required: false }]);
    expect(settingFieldsOf(33)).toEqual([{ key: 'region', label: 'Region', placeholder: 'us-east-1', hint: expect.stringContaining('Required'), required: true }]);
    expect(settingFieldsOf(41)).toEqual([
      { key: 'region', label: 'Region', placeholder: 'global', hint: expect.stringContaining('Empty: global'), required: false },
      { key: 'project_id', label: 'Project ID', placeholder: 'From the key file', hint: expect.stringContaining('project_id'), required: false },
    ]);
  });

  test('the base URL: required for Azure, the regional default for Bedrock and Vertex once the region is valid', () => {
    expect(baseUrlFieldOf(3, '')).toEqual({ required: true, placeholder: 'https://<resource>.openai.azure.com', hint: 'Required: the Azure OpenAI endpoint, e.g. https://<resource>.openai.azure.com' });
    expect(baseUrlFieldOf(33, '')).toMatchObject({ required: false, hint: 'Empty: https://bedrock-runtime.{region}.amazonaws.com' });
    expect(baseUrlFieldOf(33, 'Not a region')).toMatchObject({ hint: 'Empty: https://bedrock-runtime.{region}.amazonaws.com' });
    expect(baseUrlFieldOf(33, ' eu-central-1 ')).toEqual({ required: false, placeholder: 'https://bedrock-runtime.eu-central-1.amazonaws.com', hint: 'Empty: https://bedrock-runtime.eu-central-1.amazonaws.com' });
    expect(baseUrlFieldOf(41, '')).toMatchObject({ placeholder: 'https://aiplatform.googleapis.com' });
    expect(baseUrlFieldOf(41, 'europe-west4')).toMatchObject({ placeholder: 'https://europe-west4-aiplatform.googleapis.com' });
    expect(baseUrlFieldOf(1, 'us-east-1')).toMatchObject({ placeholder: 'https://api.openai.com', hint: 'Empty: https://api.openai.com' });
  });

  test('Azure: the endpoint is required and the API version checked; a valid one is sent as settings', () => {
    expect(issuesOf(newChannel(3, { key: 'azure-key', api_version: 'latest' }))).toEqual({
      base_url: 'Azure OpenAI channels need their endpoint here, e.g. https://<resource>.openai.azure.com',
      api_version: 'must be an API version like 2024-10-21',
    });
    const values = channelFormSchema().parse(newChannel(3, { key: 'azure-key', base_url: 'https://res.openai.azure.com/', api_version: '2024-10-21' }));
    expect(createBodyOf(values)).toMatchObject({ type: 3, base_url: 'https://res.openai.azure.com', key: 'azure-key', settings: { api_version: '2024-10-21' } });
    // Empty: the service's default version.
    expect(createBodyOf(channelFormSchema().parse(newChannel(3, { key: 'azure-key', base_url: 'https://res.openai.azure.com' }))).settings).toEqual({});
  });

  test('Bedrock: the region is required and checked, the key must be an AWS key pair or a Bedrock API key', () => {
    expect(issuesOf(newChannel(33, { key: 'AKIAEXAMPLE|secret' }))).toEqual({ region: 'AWS Bedrock channels need a region' });
    expect(issuesOf(newChannel(33, { key: 'AKIAEXAMPLE|secret', region: 'US East' }))).toEqual({ region: 'must be a region name like us-east-1 or europe-west4' });
    expect(issuesOf(newChannel(33, { key: 'AKIAEXAMPLE||token', region: 'us-east-1' }))).toEqual({
      key: 'must be ACCESS_KEY_ID|SECRET_ACCESS_KEY or ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN',
    });
    for (const key of ['AKIAEXAMPLE|secret', 'AKIAEXAMPLE|secret|session-token', 'bedrock-api-key']) {
      const values = channelFormSchema().parse(newChannel(33, { key, region: 'us-east-1' }));
      expect(createBodyOf(values)).toMatchObject({ type: 33, key, base_url: '', settings: { region: 'us-east-1' } });
    }
  });

  test('Vertex: the key must be a service account key file; region and project are optional', () => {
    expect(issuesOf(newChannel(41, { key: 'not json' }))).toEqual({ key: 'must be the service account key file (JSON)' });
    expect(issuesOf(newChannel(41, { key: serviceAccountKeyFile({ private_key: '' }) }))).toEqual({ key: 'the key file lacks private_key' });
    expect(issuesOf(newChannel(41, { key: serviceAccountKeyFile(), project_id: 'X' }))).toEqual({ project_id: 'must be a Google Cloud project id' });
    const key = serviceAccountKeyFile();
    expect(createBodyOf(channelFormSchema().parse(newChannel(41, { key })))).toMatchObject({ type: 41, key, settings: {} });
    const placed = channelFormSchema().parse(newChannel(41, { key, region: 'us-central1', project_id: 'other-project' }));
    expect(createBodyOf(placed).settings).toEqual({ region: 'us-central1', project_id: 'other-project' });
  });

  test('editing a cloud channel: its settings are filled in, the key kept unless typed, and checked only when typed', () => {
    const vertex: ChannelView = { ...channel, type: 41, base_url: '', settings: { region: 'europe-west4', project_id: 'stored-project' } };
    const defaults = channelFormDefaults(vertex);
    expect(defaults).toMatchObject({ type: 41, key: '', region: 'europe-west4', project_id: 'stored-project', api_version: '' });
    const body = updateBodyOf(vertex.id, channelFormSchema(vertex).parse(defaults));
    expect(body).not.toHaveProperty('key');
    expect(body.settings).toEqual({ region: 'europe-west4', project_id: 'stored-project' });
    expect(issuesOf({ ...defaults, key: '{}' }, vertex)).toEqual({ key: 'the key file lacks client_email, private_key, token_uri' });
    // Another type is another address: the new type's key, in its form.
    expect(issuesOf({ ...defaults, type: 33, region: 'us-east-1' }, vertex)).toEqual({ key: 'Enter the key for the new address' });
  });

  test('a pasted or uploaded key file is confirmed by its account, never by its key', () => {
    const key = serviceAccountKeyFile();
    expect(serviceAccountOf(key)).toEqual({ clientEmail: 'relay@unit-project.iam.gserviceaccount.com', projectId: 'unit-project' });
    expect(serviceAccountOf(serviceAccountKeyFile({ project_id: '' }))).toEqual({ clientEmail: 'relay@unit-project.iam.gserviceaccount.com', projectId: undefined });
    for (const notAKeyFile of ['', 'sk-1', '[]', 'null', '{"client_email": 5}']) expect(serviceAccountOf(notAKeyFile)).toBeUndefined();
  });

  test('a key file is read as text, trimmed; a file far larger than a key file is not read', async () => {
    const key = serviceAccountKeyFile();
    await expect(readKeyFile(new Blob([`${key}\n`], { type: 'application/json' }))).resolves.toEqual({ ok: true, key });
    await expect(readKeyFile(new Blob(['x'.repeat(65 * 1024)]))).resolves.toEqual({ ok: false, message: 'This file is too large to be a key file' });
  });

  test("the service's 400 naming a field is shown beside that field; other failures are not", () => {
    const refused = (message: string, status = 400) => serverFieldError(new ApiError(status, 'invalid_request', message));
    expect(refused('settings.region: AWS Bedrock channels need a region')).toEqual({ field: 'region', message: 'AWS Bedrock channels need a region' });
    expect(refused('settings.project_id: must be a Google Cloud project id')).toEqual({ field: 'project_id', message: 'must be a Google Cloud project id' });
    expect(refused('settings.responses: must be "native" or "chat"')).toEqual({ field: 'responses', message: 'must be "native" or "chat"' });
    expect(refused('key: Google Vertex AI the key file lacks private_key')).toEqual({ field: 'key', message: 'Google Vertex AI the key file lacks private_key' });
    expect(refused('base_url: Azure OpenAI channels need their endpoint as base_url')).toEqual({ field: 'base_url', message: 'Azure OpenAI channels need their endpoint as base_url' });
    expect(refused('settings: must be a JSON object')).toBeUndefined();
    expect(refused('settings.name: channel type 1 (OpenAI-compatible) has no setting "name"')).toBeUndefined();
    expect(refused('unknown field: extra')).toBeUndefined();
    expect(refused('the channel was changed meanwhile: reload it and try again', 409)).toBeUndefined();
    expect(serverFieldError(new Error('key: not from the service'))).toBeUndefined();
  });
});
