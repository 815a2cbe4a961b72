import { type OptionTable, type OptionValues, parseOptions, readOptions } from '@modelgate/schemas';

/** Runtime options (prices, retries), parsed once per change instead of per request. */
export class OptionsCache {
  private current: OptionValues = parseOptions([]);

  constructor(private readonly db: OptionTable) {}

  get values(): OptionValues {
    return this.current;
  }

  async reload(): Promise<void> {
    this.current = await readOptions(this.db);
  }
}
