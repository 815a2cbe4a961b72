import { type OptionKey, type OptionValues, parseOptions } from '@modelgate/schemas';
import type { Db } from '../../lib/db';

export async function readOptionRows(db: Db): Promise<{ key: string; value: string }[]> {
  return db.option.findMany({ select: { key: true, value: true } });
}

export async function readOptions(db: Db): Promise<OptionValues> {
  return parseOptions(await readOptionRows(db));
}

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
