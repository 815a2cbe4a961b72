import { priceUnitOfModel } from '@modelgate/schemas/api';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { SelectField } from '../../components/Field';
import { ErrorAlert, PageHeader } from '../../components/feedback';
import { formatUsdPrice } from '../../lib/money';
import { PRICE_UNIT_LABELS, type PriceUnit } from '../../lib/prices';
import { usePricing, useSelf } from '../../lib/queries';
import { ROLE_ADMIN, useUser } from '../../session/session-context';
import { mediaSnippets, quickStartSnippets, type Snippet } from './snippets';

/** The snippets' models unless the user picks others: cheap, and served by most OpenAI-compatible channels. */
const EXAMPLE_MODEL = 'gpt-4o-mini';
const EXAMPLE_IMAGE_MODEL = 'gpt-image-1';
const EXAMPLE_TRANSCRIPTION_MODEL = 'whisper-1';

/** The model a snippet uses: the user's pick, else the example when it is priced (or nothing is), else the first priced one. */
function useModelChoice(models: readonly string[], example: string): [string, (model: string) => void] {
  const [chosen, setChosen] = useState<string>();
  return [chosen ?? (models.length === 0 || models.includes(example) ? example : models[0]!), setChosen];
}

/** From nothing to a first call: what is set up, the base URLs, copy-ready snippets, the priced models. */
export function QuickStartPage() {
  const user = useUser();
  const isAdmin = user.role >= ROLE_ADMIN;
  const self = useSelf();
  const pricing = usePricing();
  const keys = useQuery({ queryKey: ['tokens', 'count'], queryFn: () => api.call('get /api/token', { query: { p: '1', page_size: '1' } }) });
  const channels = useQuery({
    queryKey: ['channels', 'count'],
    queryFn: () => api.call('get /api/channel', { query: { p: '1', page_size: '1' } }),
    enabled: isAdmin,
  });
  const models = pricing.data?.items.map((item) => item.model_name) ?? [];
  const [model, setModel] = useModelChoice(models, EXAMPLE_MODEL);
  // Every priced model, by tokens or per unit; the media snippets offer those whose name says what they make.
  const pricedModels = [...new Set([...models, ...(pricing.data?.unit_prices.map((price) => price.model_name) ?? [])])].sort();
  const modelsOf = (unit: PriceUnit) => pricedModels.filter((name) => priceUnitOfModel(name) === unit);
  const imageModels = modelsOf('image');
  const transcriptionModels = modelsOf('minute');
  const [imageModel, setImageModel] = useModelChoice(imageModels, EXAMPLE_IMAGE_MODEL);
  const [transcriptionModel, setTranscriptionModel] = useModelChoice(transcriptionModels, EXAMPLE_TRANSCRIPTION_MODEL);
  const origin = window.location.origin;

  return (
    <>
      <PageHeader title="Quick start" />
      <ErrorAlert error={pricing.error ?? keys.error ?? channels.error} />

      <section className="panel" aria-labelledby="steps-title">
        <h2 id="steps-title">Steps</h2>
        <ol className="checklist">
          {isAdmin && (
            <Step done={channels.data && channels.data.total > 0}>
              <Link to="/admin/channels">Add a channel</Link>: an upstream provider account (OpenAI-compatible, Anthropic or Gemini) and the models it serves.
            </Step>
          )}
          {isAdmin && (
            <Step done={pricing.data && pricing.data.items.length > 0}>
              <Link to="/admin/prices">Price the models</Link>: a model without a price is refused, so nothing is served for free by mistake.
            </Step>
          )}
          <Step done={keys.data && keys.data.total > 0}>
            <Link to="/keys">Create an API key</Link>: one per application; the full key is shown once.
          </Step>
          <Step done={self.data && self.data.request_count > 0}>Call the gateway with one of the snippets below, then watch it on <Link to="/usage">Usage</Link>.</Step>
        </ol>
      </section>

      <section className="panel" aria-labelledby="urls-title">
        <h2 id="urls-title">Base URLs</h2>
        <dl className="base-urls">
          <dt>OpenAI SDKs, Codex, curl</dt>
          <dd><code>{origin}/v1</code> <CopyButton text={`${origin}/v1`} label="Copy OpenAI base URL" /></dd>
          <dt>Claude Code, Anthropic and Google SDKs</dt>
          <dd><code>{origin}</code> <CopyButton text={origin} label="Copy base URL" /></dd>
        </dl>
      </section>

      <section aria-labelledby="snippets-title">
        <div className="page-header">
          <h2 id="snippets-title">Snippets</h2>
          <div className="actions">
            <ModelSelect label="Model" models={models} model={model} example={EXAMPLE_MODEL} onChange={setModel} />
          </div>
        </div>
        {quickStartSnippets(origin, model).map((snippet) => <SnippetPanel key={snippet.id} snippet={snippet} />)}
        <p className="muted">Replace <code>sk-your-key</code> (or set <code>MODELGATE_API_KEY</code>) with your key.</p>
      </section>

      <section aria-labelledby="media-snippets-title">
        <div className="page-header">
          <h2 id="media-snippets-title">Images and audio</h2>
          <div className="actions">
            <ModelSelect label="Image model" models={imageModels} model={imageModel} example={EXAMPLE_IMAGE_MODEL} onChange={setImageModel} />
            <ModelSelect label="Transcription model" models={transcriptionModels} model={transcriptionModel} example={EXAMPLE_TRANSCRIPTION_MODEL} onChange={setTranscriptionModel} />
          </div>
        </div>
        {mediaSnippets(origin, { image: imageModel, transcription: transcriptionModel }).map((snippet) => <SnippetPanel key={snippet.id} snippet={snippet} />)}
      </section>

      <section className="panel" aria-labelledby="models-title">
        <h2 id="models-title">Model prices</h2>
        <p className="muted">
          A model can be called when it has a price and a channel serves it. Images, speech, transcriptions and rerank calls that report no tokens
          are priced per unit.
        </p>
        {pricing.data && pricing.data.items.length === 0 && <p className="muted">No model has a price yet{isAdmin ? '' : ': ask an administrator'}.</p>}
        {pricing.data && pricing.data.items.length > 0 && (
          <div className="table-wrap">
            <table>
              <caption className="muted">USD per 1M tokens for your group ({pricing.data.group})</caption>
              <thead>
                <tr><th scope="col">Model</th><th scope="col" className="num">Input</th><th scope="col" className="num">Cached input</th><th scope="col" className="num">Output</th></tr>
              </thead>
              <tbody>
                {pricing.data.items.map((item) => (
                  <tr key={item.model_name}>
                    <th scope="row">{item.model_name}</th>
                    <td className="num">{formatUsdPrice(item.input_usd_per_1m)}</td>
                    <td className="num">{formatUsdPrice(item.cached_input_usd_per_1m)}</td>
                    <td className="num">{formatUsdPrice(item.output_usd_per_1m)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {pricing.data && pricing.data.unit_prices.length > 0 && (
          <div className="table-wrap">
            <table>
              <caption className="muted">USD per unit for your group ({pricing.data.group})</caption>
              <thead>
                <tr><th scope="col">Model</th><th scope="col" className="num">Price</th><th scope="col">Per</th></tr>
              </thead>
              <tbody>
                {pricing.data.unit_prices.map((price) => (
                  <tr key={price.model_name}>
                    <th scope="row">{price.model_name}</th>
                    <td className="num">{formatUsdPrice(price.usd_per_unit)}</td>
                    <td>{price.unit ? PRICE_UNIT_LABELS[price.unit] : 'unit'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

/** A model picker for snippets; with nothing priced, the example name, disabled. */
function ModelSelect({ label, models, model, example, onChange }: {
  label: string;
  models: readonly string[];
  model: string;
  example: string;
  onChange: (model: string) => void;
}) {
  return (
    <SelectField label={label} value={model} onChange={(event) => onChange(event.target.value)} disabled={models.length === 0}
      hint={models.length === 0 ? 'None is priced yet: the snippets use an example name.' : undefined}>
      {(models.length > 0 ? models : [example]).map((name) => <option key={name} value={name}>{name}</option>)}
    </SelectField>
  );
}

function SnippetPanel({ snippet }: { snippet: Snippet }) {
  return (
    <section className="panel snippet" aria-labelledby={`snippet-${snippet.id}`}>
      <div className="snippet-head">
        <h3 id={`snippet-${snippet.id}`}>{snippet.title}</h3>
        <CopyButton text={snippet.code} label={`Copy ${snippet.title} snippet`} />
      </div>
      <p className="muted">{snippet.description}</p>
      <pre><code>{snippet.code}</code></pre>
    </section>
  );
}

/** One step; `done` is undefined while it is being checked. */
function Step({ done, children }: { done: boolean | undefined; children: ReactNode }) {
  const badge = done === undefined ? 'Checking' : done ? 'Done' : 'To do';
  return (
    <li>
      <span className={done ? 'badge ok' : 'badge'}>{badge}</span> {children}
    </li>
  );
}
