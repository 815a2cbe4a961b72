import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../../api';
import { InputField } from '../../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { ROLE_ROOT, useUser } from '../../../session/session-context';
import { useOptions } from '../options-query';
import type { OptionValues } from '@modelgate/schemas/options';
import {
  changedRatioOptions,
  type DraftErrors,
  draftOf,
  PRICE_KIND_LABELS,
  PRICE_KINDS,
  type PriceDraft,
  type PriceKind,
  type PriceRow,
  priceRowsOf,
  RATIO_OPTION_KEYS,
  ratioMapsOfRows,
  readDraft,
  tierRowsOf,
  ZERO_INPUT_MESSAGE,
} from './price-table';

/** Model prices in USD per 1M tokens, stored as the ratio options (docs/api.md 2.11). */
export function PricesPage() {
  const user = useUser();
  const isRoot = user.role >= ROLE_ROOT;
  const options = useOptions(isRoot);
  // Kept here: a save reloads the options, which starts the editor afresh.
  const [saved, setSaved] = useState<string[]>();
  return (
    <>
      <PageHeader title="Prices" />
      <p className="muted">
        What each model costs, in USD per 1M tokens, for a user group with ratio 1. The gateway stores prices as ratios: model ratio 1 = USD 2 per
        1M input tokens, and the cached input, cache write and output prices are multiples of the input price. A model that is not in this table is
        refused.
      </p>
      {!isRoot ? (
        <p className="alert error" role="alert">Prices are options, which only the root user can see and change.</p>
      ) : options.isError ? (
        <ErrorAlert error={options.error} />
      ) : options.values ? (
        <>
          {saved && <Notice>Saved {saved.join(', ')}. Relays use the new prices within a few seconds.</Notice>}
          <PriceEditor key={options.dataUpdatedAt} options={options.values} onEdit={() => setSaved(undefined)} onSaved={setSaved} />
        </>
      ) : (
        <Loading what="prices" />
      )}
    </>
  );
}

const EMPTY_DRAFT: PriceDraft = { model: '', input: '', cachedInput: '', cacheWrite: '', output: '' };

function PriceEditor({ options, onEdit, onSaved }: { options: OptionValues; onEdit: () => void; onSaved: (keys: string[]) => void }) {
  const queryClient = useQueryClient();
  const storedRows = useMemo(() => priceRowsOf(options), [options]);
  const [drafts, setDrafts] = useState<PriceDraft[]>(() => storedRows.map(draftOf));
  const [filter, setFilter] = useState('');
  const [showErrors, setShowErrors] = useState(false);

  const checked = drafts.map((draft) => readDraft(draft, new Set()));
  const rows = checked.flatMap((result) => (result.row ? [result.row] : []));
  const valid = rows.length === drafts.length;
  const changes = valid ? changedRatioOptions(options, ratioMapsOfRows(options, rows)) : [];
  const removed = storedRows.filter((row) => !drafts.some((draft) => draft.model === row.model)).length;

  const save = useMutation({
    mutationFn: async () => {
      // One PUT per changed map: the service validates and stores each option on its own.
      for (const change of changes) await api.call('put /api/option', { body: change });
      return RATIO_OPTION_KEYS.filter((key) => changes.some((change) => change.key === key));
    },
    onSuccess: onSaved,
    // Also after a failed write: the maps written before it are stored, and the table shows them.
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: ['options'] }), queryClient.invalidateQueries({ queryKey: ['pricing'] })]),
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setShowErrors(true);
    if (valid && changes.length > 0) save.mutate();
  }

  function edit(change: (current: PriceDraft[]) => PriceDraft[]) {
    setDrafts(change);
    onEdit();
  }
  const update = (model: string, kind: PriceKind, text: string) => edit((current) => current.map((draft) => (draft.model === model ? { ...draft, [kind]: text } : draft)));
  const remove = (model: string) => edit((current) => current.filter((draft) => draft.model !== model));
  const add = (row: PriceRow) => edit((current) => [...current, draftOf(row)].sort((a, b) => a.model.localeCompare(b.model)));

  const needle = filter.trim().toLowerCase();
  const shown = drafts.map((draft, index) => ({ draft, errors: checked[index]?.errors ?? {} })).filter(({ draft }) => draft.model.toLowerCase().includes(needle));

  return (
    <>
      <ErrorAlert error={save.error} />
      <AddModel existing={new Set(drafts.map((draft) => draft.model))} onAdd={add} />
      <form className="panel" onSubmit={submit} noValidate aria-labelledby="price-table-title">
        <h2 id="price-table-title">Model prices (USD per 1M tokens)</h2>
        <div className="row prices-toolbar">
          <InputField label="Filter models" type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
          <div className="actions">
            <button type="button" onClick={() => { edit(() => storedRows.map(draftOf)); setShowErrors(false); save.reset(); }} disabled={changes.length === 0 && valid}>
              Discard changes
            </button>
            <button type="submit" className="primary" disabled={save.isPending || (valid && changes.length === 0)}>Save prices</button>
          </div>
        </div>
        <p className="muted" role="status">
          {!valid && showErrors ? 'Fix the highlighted prices to save.' : changes.length > 0 ? `Unsaved changes to ${changes.map((change) => change.key).join(', ')}${removed > 0 ? ` (${removed} model${removed === 1 ? '' : 's'} removed)` : ''}.` : 'No unsaved changes.'}
        </p>
        <div className="table-wrap">
          <table className="admin-table prices-table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                {PRICE_KINDS.map((kind) => <th key={kind} scope="col" className="num">{PRICE_KIND_LABELS[kind]}</th>)}
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.length === 0 && (
                <tr><td colSpan={PRICE_KINDS.length + 2} className="muted">{drafts.length === 0 ? 'No model is priced yet: add one above.' : 'No model matches the filter.'}</td></tr>
              )}
              {shown.map(({ draft, errors }) => (
                <PriceRowInputs key={draft.model} draft={draft} errors={showErrors ? errors : pricesOnlyErrors(errors)} onChange={update} onRemove={remove} />
              ))}
            </tbody>
          </table>
        </div>
      </form>
      <LongContextTiers options={options} />
      <ToolPrices tools={options.ToolPrice} />
      <GroupRatios groups={options.GroupRatio} />
    </>
  );
}

function LongContextTiers({ options }: { options: OptionValues }) {
  const rows = useMemo(() => tierRowsOf(options), [options]);
  return (
    <section className="panel" aria-labelledby="tiers-title">
      <h2 id="tiers-title">Long-context prices (USD per 1M tokens)</h2>
      <p className="muted">
        A call whose prompt is longer than a tier's threshold is priced whole at that tier (the highest it reaches), as the providers do. Change
        them as the ModelRatioTiers option on the <Link to="/admin/options">Options</Link> page.
      </p>
      <div className="table-wrap">
        <table className="admin-table prices-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="num">Prompt above (tokens)</th>
              {PRICE_KINDS.map((kind) => <th key={kind} scope="col" className="num">{PRICE_KIND_LABELS[kind]}</th>)}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={`${row.model}-${row.abovePromptTokens}`}>
                <th scope="row" className="mono">{row.model}</th>
                <td className="num" data-label="Prompt above (tokens)">{row.abovePromptTokens.toLocaleString('en-US')}</td>
                {PRICE_KINDS.map((kind) => <td key={kind} className="num" data-label={PRICE_KIND_LABELS[kind]}>{row.prices[kind]}</td>)}
              </tr>
            ))}
            {rows.length === 0 && <tr><td colSpan={PRICE_KINDS.length + 2} className="muted">No tiers: every model has one price whatever the prompt's length.</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function ToolPrices({ tools }: { tools: ReadonlyMap<string, number> }) {
  const rows = [...tools].sort(([a], [b]) => a.localeCompare(b));
  return (
    <section className="panel" aria-labelledby="tool-prices-title">
      <h2 id="tool-prices-title">Server tool prices</h2>
      <p className="muted">
        Tools the provider runs (web search, grounding …) cost this per call the provider reports, on top of the tokens. A request that offers a
        tool not listed is refused. Change them as the ToolPrice option on the <Link to="/admin/options">Options</Link> page.
      </p>
      <div className="table-wrap">
        <table className="admin-table prices-table">
          <thead><tr><th scope="col">Tool</th><th scope="col" className="num">USD per call</th><th scope="col" className="num">USD per 1,000 calls</th></tr></thead>
          <tbody>
            {rows.map(([tool, usd]) => (
              <tr key={tool}>
                <th scope="row" className="mono">{tool}</th>
                <td className="num" data-label="USD per call">{usd}</td>
                <td className="num" data-label="USD per 1,000 calls">{Math.round(usd * 1000 * 1e6) / 1e6}</td>
              </tr>
            ))}
            {rows.length === 0 && <tr><td colSpan={3} className="muted">No tool is priced: requests offering server tools are refused.</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** While typing, only the zero-input rule is shown at once; the rest after a save attempt. */
function pricesOnlyErrors(errors: DraftErrors): DraftErrors {
  return Object.fromEntries(Object.entries(errors).filter(([, message]) => message === ZERO_INPUT_MESSAGE)) as DraftErrors;
}

function PriceRowInputs({ draft, errors, onChange, onRemove }: {
  draft: PriceDraft;
  errors: DraftErrors;
  onChange: (model: string, kind: PriceKind, text: string) => void;
  onRemove: (model: string) => void;
}) {
  return (
    <tr>
      <th scope="row" className="mono">{draft.model}</th>
      {PRICE_KINDS.map((kind) => {
        const error = errors[kind];
        const errorId = `price-error-${draft.model}-${kind}`;
        return (
          <td key={kind} className="num" data-label={PRICE_KIND_LABELS[kind]}>
            <input
              className="price-input"
              inputMode="decimal"
              aria-label={`${draft.model} ${PRICE_KIND_LABELS[kind].toLowerCase()} price`}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? errorId : undefined}
              value={draft[kind]}
              onChange={(event) => onChange(draft.model, kind, event.target.value)}
            />
            {error && <p className="field-error price-error" id={errorId}>{error}</p>}
          </td>
        );
      })}
      <td>
        <button type="button" className="danger" aria-label={`Remove ${draft.model}`} onClick={() => onRemove(draft.model)}>Remove</button>
      </td>
    </tr>
  );
}

/** A new model; cached input, cache write and output default to the input price. */
function AddModel({ existing, onAdd }: { existing: ReadonlySet<string>; onAdd: (row: PriceRow) => void }) {
  const [draft, setDraft] = useState<PriceDraft>(EMPTY_DRAFT);
  const [errors, setErrors] = useState<DraftErrors>({});
  function submit(event: FormEvent) {
    event.preventDefault();
    const filled = { ...draft };
    for (const kind of PRICE_KINDS) if (kind !== 'input' && filled[kind].trim() === '') filled[kind] = filled.input;
    const result = readDraft(filled, existing);
    setErrors(result.errors);
    if (result.row) {
      onAdd(result.row);
      setDraft(EMPTY_DRAFT);
    }
  }
  const set = (field: keyof PriceDraft) => (event: { target: { value: string } }) => setDraft({ ...draft, [field]: event.target.value });
  return (
    <form className="panel" onSubmit={submit} noValidate aria-labelledby="add-model-title">
      <h2 id="add-model-title">Add a model</h2>
      <div className="form-grid">
        <InputField label="Model" value={draft.model} onChange={set('model')} error={errors.model} autoComplete="off" hint="As clients send it, e.g. gpt-4o-mini" />
        {PRICE_KINDS.map((kind) => (
          <InputField
            key={kind}
            label={`${PRICE_KIND_LABELS[kind]} price`}
            inputMode="decimal"
            value={draft[kind]}
            onChange={set(kind)}
            error={errors[kind]}
            hint={kind === 'input' ? 'USD per 1M tokens' : 'USD per 1M tokens; empty: the input price'}
          />
        ))}
      </div>
      <button type="submit">Add model</button>
      <span className="muted"> Added models are saved with “Save prices”.</span>
    </form>
  );
}

function GroupRatios({ groups }: { groups: ReadonlyMap<string, number> }) {
  return (
    <section className="panel" aria-labelledby="group-ratios-title">
      <h2 id="group-ratios-title">Group ratios</h2>
      <p className="muted">
        A user's group multiplies every price above (a group not listed pays ratio 1). Change them as the GroupRatio option on the{' '}
        <Link to="/admin/options">Options</Link> page.
      </p>
      <div className="table-wrap">
        <table className="admin-table">
          <thead><tr><th scope="col">Group</th><th scope="col" className="num">Ratio</th></tr></thead>
          <tbody>
            {[...groups].map(([group, ratio]) => <tr key={group}><td className="mono">{group}</td><td className="num">{ratio}</td></tr>)}
            {groups.size === 0 && <tr><td colSpan={2} className="muted">No group ratios: every group pays ratio 1.</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}
