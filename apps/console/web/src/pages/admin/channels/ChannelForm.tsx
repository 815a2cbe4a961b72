import { zodResolver } from '@hookform/resolvers/zod';
import type { ChannelView } from '@modelgate/schemas/api';
import { useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { api } from '../../../api';
import { CheckboxField, InputField, SelectField, TextAreaField } from '../../../components/Field';
import { ErrorAlert } from '../../../components/feedback';
import { CHANNEL_TYPE, CHANNEL_TYPES, type ChannelTypeFacts, isChannelType } from '@modelgate/schemas/channel-types';
import {
  baseUrlFieldOf,
  channelFormDefaults,
  type ChannelFormInput,
  type ChannelFormOutput,
  channelFormSchema,
  createBodyOf,
  movesStoredKey,
  readKeyFile,
  serverFieldError,
  serviceAccountOf,
  settingFieldsOf,
  updateBodyOf,
} from './channel-form';

/** The type's key format, then what happens to the key: stored encrypted, and never shown again. */
function keyHint(facts: ChannelTypeFacts | undefined, channel: ChannelView | undefined, keyRequired: boolean): string {
  const what = facts ? `${facts.keyHint}. ` : '';
  if (!channel) return `${what}Stored encrypted.`;
  return keyRequired
    ? `${what}Required: the base URL or type changed, and the stored key is only ever sent to the address it was entered for.`
    : `${what}Never shown again. Leave empty to keep the stored key.`;
}

/** Create a channel, or edit `channel` (PUT): type-specific fields follow the type select. */
export function ChannelForm({ channel, onSaved, onCancel }: { channel?: ChannelView; onSaved: (channel: ChannelView) => void; onCancel: () => void }) {
  const queryClient = useQueryClient();
  const form = useForm<ChannelFormInput, unknown, ChannelFormOutput>({
    resolver: zodResolver(channelFormSchema(channel)),
    defaultValues: channelFormDefaults(channel),
  });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (values) => {
    setError(undefined);
    try {
      const saved = channel
        ? await api.call('put /api/channel', { body: updateBodyOf(channel.id, values) })
        : await api.call('post /api/channel', { body: createBodyOf(values) });
      await queryClient.invalidateQueries({ queryKey: ['channels'] });
      onSaved(saved);
    } catch (err) {
      // A refusal naming a field is shown beside it, as the form's own checks are.
      const refused = serverFieldError(err);
      if (refused) form.setError(refused.field, { type: 'server', message: refused.message }, { shouldFocus: true });
      else setError(err);
    }
  });
  async function loadKeyFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    if (!file) return;
    const read = await readKeyFile(file);
    if (read.ok) form.setValue('key', read.key, { shouldDirty: true, shouldValidate: true });
    else form.setError('key', { type: 'file', message: read.message });
  }
  const { errors, isSubmitting } = form.formState;
  const type = Number(useWatch({ control: form.control, name: 'type' }));
  const baseUrl = useWatch({ control: form.control, name: 'base_url' });
  const region = useWatch({ control: form.control, name: 'region' });
  const key = useWatch({ control: form.control, name: 'key' });
  const facts = isChannelType(type) ? CHANNEL_TYPES[type] : undefined;
  const baseUrlField = isChannelType(type) ? baseUrlFieldOf(type, region) : undefined;
  const settingFields = isChannelType(type) ? settingFieldsOf(type) : [];
  const takesKeyFile = type === CHANNEL_TYPE.vertex;
  const serviceAccount = takesKeyFile ? serviceAccountOf(key) : undefined;
  const keyRequired = !channel || movesStoredKey(channel, { type, base_url: baseUrl });
  const title = channel ? `Edit channel ${channel.name}` : 'Add a channel';

  return (
    <form className="panel channel-form" onSubmit={(event) => void submit(event)} noValidate aria-label={title}>
      <h2>{title}</h2>
      <ErrorAlert error={error} />
      <div className="form-grid">
        <InputField label="Name" autoFocus autoComplete="off" error={errors.name && 'Enter a name of up to 100 characters'} {...form.register('name')} />
        <SelectField label="Type" error={errors.type?.message} {...form.register('type', { valueAsNumber: true })}>
          {Object.values(CHANNEL_TYPES).map((facts) => <option key={facts.type} value={facts.type}>{facts.label} ({facts.type})</option>)}
        </SelectField>
        {settingFields.map((field) => (
          <InputField
            key={field.key}
            label={field.label}
            autoComplete="off"
            spellCheck={false}
            placeholder={field.key === 'project_id' ? serviceAccount?.projectId ?? field.placeholder : field.placeholder}
            hint={field.hint}
            aria-required={field.required}
            error={errors[field.key]?.message}
            {...form.register(field.key)}
          />
        ))}
        <InputField
          label="Base URL"
          type="url"
          placeholder={baseUrlField?.placeholder}
          hint={baseUrlField?.hint}
          aria-required={baseUrlField?.required}
          error={errors.base_url?.message}
          {...form.register('base_url')}
        />
        <InputField
          label="Key"
          type="password"
          autoComplete="new-password"
          hint={keyHint(facts, channel, keyRequired)}
          aria-required={keyRequired}
          error={errors.key?.message}
          {...form.register('key')}
        />
        {takesKeyFile && (
          <InputField
            label="Key file"
            type="file"
            accept="application/json,.json"
            onChange={(event) => void loadKeyFile(event)}
            hint={
              serviceAccount
                ? `Key file of ${serviceAccount.clientEmail}${serviceAccount.projectId ? ` (project ${serviceAccount.projectId})` : ''}.`
                : 'The service account’s JSON key file: read here in the browser into the Key field (or paste the file’s text there).'
            }
          />
        )}
        <InputField label="Models" autoComplete="off" hint="Comma-separated, e.g. gpt-4o-mini, gpt-4o" error={errors.models?.message} {...form.register('models')} />
        <InputField label="Groups" autoComplete="off" hint="Comma-separated user groups this channel serves" error={errors.groups?.message} {...form.register('groups')} />
        <InputField label="Priority" type="number" step={1} hint="Higher is tried first" error={errors.priority && 'Enter a whole number'} {...form.register('priority', { valueAsNumber: true })} />
        <InputField
          label="Weight"
          type="number"
          min={0}
          step={1}
          hint="Share of calls within the same priority"
          error={errors.weight && 'Enter a whole number of 0 or more'}
          {...form.register('weight', { valueAsNumber: true })}
        />
        {facts?.settings.includes('responses') && (
          <SelectField
            label="Responses API"
            hint="How /v1/responses calls reach this upstream: passed through, or translated to /v1/chat/completions"
            error={errors.responses?.message}
            {...form.register('responses')}
          >
            <option value="native">Native (default)</option>
            <option value="chat">Via chat completions</option>
          </SelectField>
        )}
      </div>
      <TextAreaField
        label="Model mapping"
        className="mono"
        spellCheck={false}
        placeholder='{"gpt-4o-mini": "openai/gpt-4o-mini"}'
        hint="Optional JSON object: the model clients ask for → the model sent upstream"
        error={errors.model_mapping?.message}
        {...form.register('model_mapping')}
      />
      <CheckboxField label="Auto-disable" hint="Disable the channel when its upstream rejects the key or reports exhausted quota" {...form.register('auto_ban')} />
      <div className="row">
        <button type="submit" className="primary" disabled={isSubmitting}>{channel ? 'Save channel' : 'Create channel'}</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
