import { priceUnitOfModel } from '@modelgate/schemas/api';
import { type FormEvent, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { InputField } from '../../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { PRICE_UNIT_LABELS } from '../../../lib/prices';
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
  ratioMapText,
  readDraft,
  tierRowsOf,
  ZERO_INPUT_MESSAGE,
} from './price-table';
import {
  changedModelPriceOption,
  readUnitDraft,
  type UnitDraftErrors,
  type UnitPriceDraft,
  type UnitPriceRow,
  unitDraftOf,
  unitPriceRowsOf,
} from './unit-price-table';
import { usePriceTable } from './use-price-table';

/**
 * Each editor starts afresh when the options it edits change (a save), and keeps what is being
 * typed in it when the other one saves.
 */
const ratioMapsKey = (options: OptionValues) => RATIO_OPTION_KEYS.map((key) => ratioMapText(options[key])).join('\n');

/** Model prices in USD per 1M tokens, stored as the ratio options (docs/api.md 2.11), and per unit, stored as ModelPrice (2.14). */
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
        What each model costs for a user group with ratio 1: in USD per 1M tokens, or per unit for images, speech, transcriptions and rerank calls
        that report no tokens. The gateway stores token prices as ratios: model ratio 1 = USD 2 per 1M input tokens, and the cached input, cache
        write and output prices are multiples of the input price. A model with neither a token price nor a unit price is refused.
      </p>
      {!isRoot ? (
        <p className="alert error" role="alert">Prices are options, which only the root user can see and change.</p>
      ) : options.isError ? (
        <ErrorAlert error={options.error} />
      ) : options.values ? (
        <>
          {saved && <Notice>Saved {saved.join(', ')}. Relays use the new prices within a few seconds.</Notice>}
          <PriceEditor key={ratioMapsKey(options.values)} options={options.values} onEdit={() => setSaved(undefined)} onSaved={setSaved} />
          <LongContextTiers options={options.values} />
          <UnitPriceEditor key={ratioMapText(options.values.ModelPrice)} options={options.values} onEdit={() => setSaved(undefined)} onSaved={setSaved} />
          <ToolPrices tools={options.values.ToolPrice} />
          <GroupRatios groups={options.values.GroupRatio} />
        </>
      ) : (
        <Loading what="prices" />
      )}
    </>
  );
}

const EMPTY_DRAFT: PriceDraft = { model: '', input: '', cachedInput: '', cacheWrite: '', output: '' };

function PriceEditor({ options, onEdit, onSaved }: { options: OptionValues; onEdit: () => void; onSaved: (keys: string[]) => void }) {
  const storedRows = useMemo(() => priceRowsOf(options), [options]);
  const table = usePriceTable({
    storedRows,
    draftOf,
    rowOf: (draft: PriceDraft) => readDraft(draft, new Set()).row,
    changesOf: (rows) => changedRatioOptions(options, ratioMapsOfRows(options, rows)),
    optionKeys: RATIO_OPTION_KEYS,
    onEdit,
    onSaved,
  });
  const [filter, setFilter] = useState('');
  const update = (model: string, kind: PriceKind, text: string) => table.update(model, { [kind]: text });

  const needle = filter.trim().toLowerCase();
  const shown = table.drafts.filter((draft) => draft.model.toLowerCase().includes(needle)).map((draft) => ({ draft, errors: readDraft(draft, new Set()).errors }));

  return (
    <>
      <ErrorAlert error={table.save.error} />
      <AddModel existing={new Set(table.drafts.map((draft) => draft.model))} onAdd={table.add} />
      <form className="panel" onSubmit={table.submit} noValidate aria-labelledby="price-table-title">
        <h2 id="price-table-title">Model prices (USD per 1M tokens)</h2>
        <div className="row prices-toolbar">
          <InputField label="Filter models" type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
          <div className="actions">
            <button type="button" onClick={table.discard} disabled={table.unchanged}>Discard changes</button>
            <button type="submit" className="primary" disabled={table.save.isPending || table.unchanged}>Save prices</button>
          </div>
        </div>
        <p className="muted" role="status">{table.status}</p>
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
                <tr><td colSpan={PRICE_KINDS.length + 2} className="muted">{table.drafts.length === 0 ? 'No model is priced yet: add one above.' : 'No model matches the filter.'}</td></tr>
              )}
              {shown.map(({ draft, errors }) => (
                <PriceRowInputs key={draft.model} draft={draft} errors={table.showErrors ? errors : pricesOnlyErrors(errors)} onChange={update} onRemove={table.remove} />
              ))}
            </tbody>
          </table>
        </div>
      </form>
    </>
  );
}

/** Prices per unit (option ModelPrice, docs/api.md 2.14) in USD, saved as one option. */
function UnitPriceEditor({ options, onEdit, onSaved }: { options: OptionValues; onEdit: () => void; onSaved: (keys: string[]) => void }) {
  const storedRows = useMemo(() => unitPriceRowsOf(options), [options]);
  const table = usePriceTable({
    storedRows,
    draftOf: unitDraftOf,
    rowOf: (draft: UnitPriceDraft) => readUnitDraft(draft, new Set()).row,
    changesOf: (rows) => {
      const change = changedModelPriceOption(options, rows);
      return change ? [change] : [];
    },
    optionKeys: ['ModelPrice'],
    onEdit,
    onSaved,
  });

  return (
    <section className="panel" aria-labelledby="unit-prices-title">
      <h2 id="unit-prices-title">Prices per unit (USD)</h2>
      <p className="muted">
        Images, speech, transcriptions and translations, and rerank calls cost this per unit: an image (high or HD quality, and a size above
        1024×1024, each count one unit more), 1,000 characters of speech, a minute of audio, a request. A model that also has token prices is
        charged by the tokens when its answer reports them. Moderations are free unless priced here.
      </p>
      <ErrorAlert error={table.save.error} />
      <AddUnitPrice existing={new Set(table.drafts.map((draft) => draft.model))} onAdd={table.add} />
      <form onSubmit={table.submit} noValidate aria-label="Prices per unit">
        <div className="row prices-toolbar">
          <p className="muted" role="status">{table.status}</p>
          <div className="actions">
            <button type="button" onClick={table.discard} disabled={table.unchanged}>Discard changes</button>
            <button type="submit" className="primary" disabled={table.save.isPending || table.unchanged}>Save unit prices</button>
          </div>
        </div>
        <div className="table-wrap">
          <table className="admin-table prices-table">
            <thead>
              <tr><th scope="col">Model</th><th scope="col">Unit</th><th scope="col" className="num">USD per unit</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>
              {table.drafts.length === 0 && <tr><td colSpan={4} className="muted">No model is priced per unit: such calls are refused unless the model has token prices.</td></tr>}
              {table.drafts.map((draft) => (
                <UnitPriceInputs
                  key={draft.model}
                  draft={draft}
                  error={table.showErrors ? readUnitDraft(draft, new Set()).errors.usd : undefined}
                  onChange={(model, usd) => table.update(model, { usd })}
                  onRemove={table.remove}
                />
              ))}
            </tbody>
          </table>
        </div>
      </form>
    </section>
  );
}

function UnitPriceInputs({ draft, error, onChange, onRemove }: {
  draft: UnitPriceDraft;
  error: string | undefined;
  onChange: (model: string, usd: string) => void;
  onRemove: (model: string) => void;
}) {
  const unit = priceUnitOfModel(draft.model);
  const errorId = `unit-price-error-${draft.model}`;
  return (
    <tr>
      <th scope="row" className="mono">{draft.model}</th>
      <td data-label="Unit">{unit ? PRICE_UNIT_LABELS[unit] : <span className="muted">the route's</span>}</td>
      <td className="num" data-label="USD per unit">
        <input
          className="price-input"
          inputMode="decimal"
          aria-label={`${draft.model} USD per unit`}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          value={draft.usd}
          onChange={(event) => onChange(draft.model, event.target.value)}
        />
        {error && <p className="field-error price-error" id={errorId}>{error}</p>}
      </td>
      <td>
        <button type="button" className="danger" aria-label={`Remove ${draft.model} unit price`} onClick={() => onRemove(draft.model)}>Remove</button>
      </td>
    </tr>
  );
}

const EMPTY_UNIT_DRAFT: UnitPriceDraft = { model: '', usd: '' };

/** A new model priced per unit; the unit its name tells is shown as it is typed. */
function AddUnitPrice({ existing, onAdd }: { existing: ReadonlySet<string>; onAdd: (row: UnitPriceRow) => void }) {
  const [draft, setDraft] = useState<UnitPriceDraft>(EMPTY_UNIT_DRAFT);
  const [errors, setErrors] = useState<UnitDraftErrors>({});
  const unit = priceUnitOfModel(draft.model.trim());
  function submit(event: FormEvent) {
    event.preventDefault();
    const result = readUnitDraft(draft, existing);
    setErrors(result.errors);
    if (result.row) {
      onAdd(result.row);
      setDraft(EMPTY_UNIT_DRAFT);
    }
  }
  const set = (field: keyof UnitPriceDraft) => (event: { target: { value: string } }) => setDraft({ ...draft, [field]: event.target.value });
  return (
    <form className="unit-price-add" onSubmit={submit} noValidate aria-label="Add a unit price">
      <div className="form-grid">
        <InputField label="Model" value={draft.model} onChange={set('model')} error={errors.model} autoComplete="off" hint="As clients send it, e.g. dall-e-3" />
        <InputField
          label="USD per unit"
          inputMode="decimal"
          value={draft.usd}
          onChange={set('usd')}
          error={errors.usd}
          hint={unit ? `Per ${PRICE_UNIT_LABELS[unit]}` : 'Per image, 1,000 characters, minute or request: what the route counts'}
        />
      </div>
      <button type="submit">Add unit price</button>
      <span className="muted"> Saved with “Save unit prices”.</span>
    </form>
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
