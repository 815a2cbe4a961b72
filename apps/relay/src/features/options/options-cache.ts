import { type OptionValues, parseOptions } from '@modelgate/schemas';
import type { OptionRepository } from './repository';

/** Runtime options (prices, retries), parsed once per change instead of per request. */
export class OptionsCache {
  private current: OptionValues = parseOptions([]);

  constructor(private readonly repository: OptionRepository) {}

  get values(): OptionValues {
    return this.current;
  }

  async reload(): Promise<void> {
    this.current = parseOptions(await this.repository.findAll());
  }
}
