/**
 * Gathers the calls made during one turn of the event loop and runs them as batches (at most
 * `maxSize` each) once the turn's I/O callbacks are done (setImmediate). Under load, the calls whose
 * answers arrived in the same turn then cost one Redis command and one write instead of one each.
 * A failed batch fails each of its calls with the batch's error.
 */
export class TurnBatch<Item, Result> {
  private items: Item[] = [];
  private waiters: { resolve: (result: Result) => void; reject: (err: unknown) => void }[] = [];

  constructor(
    private readonly runBatch: (items: Item[]) => Promise<Result[]>,
    private readonly maxSize: number,
  ) {}

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      if (this.items.length === 0) setImmediate(this.flush);
      this.items.push(item);
      this.waiters.push({ resolve, reject });
    });
  }

  private readonly flush = (): void => {
    const { items, waiters } = this;
    this.items = [];
    this.waiters = [];
    for (let start = 0; start < items.length; start += this.maxSize) {
      const batchWaiters = waiters.slice(start, start + this.maxSize);
      this.runBatch(items.slice(start, start + this.maxSize)).then(
        (results) => batchWaiters.forEach((waiter, index) => waiter.resolve(results[index] as Result)),
        (err: unknown) => batchWaiters.forEach((waiter) => waiter.reject(err)),
      );
    }
  };
}
