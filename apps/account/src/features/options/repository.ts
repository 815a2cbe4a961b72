import type { OptionKey } from '@modelgate/schemas';
import type { Db } from '../../lib/db';

// Reading is shared with the relay and worker: `readOptions` / `readOptionRows` of @modelgate/schemas.

export async function upsertOption(db: Db, key: OptionKey, value: string): Promise<void> {
  await db.option.upsert({ where: { key }, create: { key, value }, update: { value } });
}

/** Inserts the given options unless a row exists for the key. Returns the keys actually inserted. */
export async function insertMissingOptions(db: Db, entries: { key: OptionKey; value: string }[]): Promise<OptionKey[]> {
  const inserted: OptionKey[] = [];
  for (const entry of entries) {
    const result = await db.option.createMany({ data: [entry], skipDuplicates: true });
    if (result.count > 0) inserted.push(entry.key);
  }
  return inserted;
}
