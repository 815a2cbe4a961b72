import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../../../api';

/** One option write of a price table: the option and its new JSON text. */
export interface OptionChange {
  key: string;
  value: string;
}

interface PriceTableOptions<Draft extends { model: string }, Row extends { model: string }> {
  /** The rows as stored, by model. */
  storedRows: readonly Row[];
  draftOf: (row: Row) => Draft;
  /** A draft's row, when it is valid. */
  rowOf: (draft: Draft) => Row | undefined;
  /** The option writes the edited rows need, in the order they must be made. */
  changesOf: (rows: Row[]) => OptionChange[];
  /** The options the table writes, in the order a save names them. */
  optionKeys: readonly string[];
  onEdit: () => void;
  onSaved: (keys: string[]) => void;
}

/**
 * A price table being edited (docs/api.md 2.11, 2.14): its rows as typed, by model, what saving them
 * would write, the save itself (one PUT /api/option per change) and the line that says where it stands.
 */
export function usePriceTable<Draft extends { model: string }, Row extends { model: string }>(table: PriceTableOptions<Draft, Row>) {
  const { storedRows, draftOf, rowOf, changesOf, optionKeys, onEdit, onSaved } = table;
  const queryClient = useQueryClient();
  const [drafts, setDrafts] = useState<Draft[]>(() => storedRows.map(draftOf));
  const [showErrors, setShowErrors] = useState(false);

  const rows = drafts.flatMap((draft) => rowOf(draft) ?? []);
  const valid = rows.length === drafts.length;
  const changes = valid ? changesOf(rows) : [];
  const changedKeys = optionKeys.filter((key) => changes.some((change) => change.key === key));
  const removed = storedRows.filter((row) => !drafts.some((draft) => draft.model === row.model)).length;

  const save = useMutation({
    mutationFn: async () => {
      // One PUT per change: the service validates and stores each option on its own.
      for (const change of changes) await api.call('put /api/option', { body: change });
      return changedKeys;
    },
    onSuccess: onSaved,
    // Also after a failed write: the options written before it are stored, and the table shows them.
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: ['options'] }), queryClient.invalidateQueries({ queryKey: ['pricing'] })]),
  });

  function edit(change: (current: Draft[]) => Draft[]) {
    setDrafts(change);
    onEdit();
  }

  const status = !valid && showErrors
    ? 'Fix the highlighted prices to save.'
    : changes.length > 0
      ? `Unsaved changes to ${changedKeys.join(', ')}${removed > 0 ? ` (${removed} model${removed === 1 ? '' : 's'} removed)` : ''}.`
      : 'No unsaved changes.';

  return {
    drafts,
    showErrors,
    status,
    save,
    /** Whether there is nothing to save or discard. */
    unchanged: valid && changes.length === 0,
    submit(event: FormEvent) {
      event.preventDefault();
      setShowErrors(true);
      if (valid && changes.length > 0) save.mutate();
    },
    discard() {
      edit(() => storedRows.map(draftOf));
      setShowErrors(false);
      save.reset();
    },
    update: (model: string, change: Partial<Draft>) => edit((current) => current.map((draft) => (draft.model === model ? { ...draft, ...change } : draft))),
    remove: (model: string) => edit((current) => current.filter((draft) => draft.model !== model)),
    add: (row: Row) => edit((current) => [...current, draftOf(row)].sort((a, b) => a.model.localeCompare(b.model))),
  };
}
