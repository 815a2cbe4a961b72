/** A socket whose writes can be held and sent together (node's net.Socket). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * The end of one event-loop turn, shared by several TurnBatches: once the turn's I/O callbacks are
 * done (setImmediate), every batch gathered in it runs in one callback, with the Redis connection's
 * socket corked meanwhile. The commands the batches send (reservations, settlements, limit checks)
 * then leave in one write and their replies come back together, instead of one system call each.
 */
export class Turn {
  private flushes: (() => void)[] = [];

  /** `socket`: the connection's current socket (it changes when the client reconnects). */
  constructor(private readonly socket: () => Corkable | undefined = () => undefined) {}

  schedule(flush: () => void): void {
    if (this.flushes.length === 0) setImmediate(this.run);
    this.flushes.push(flush);
  }

  private readonly run = (): void => {
    const { flushes } = this;
    this.flushes = [];
    const socket = this.socket();
    socket?.cork();
    try {
      for (const flush of flushes) flush();
    } finally {
      socket?.uncork();
    }
  };
}

/**
 * Gathers the calls made during one turn of the event loop and runs them as batches (at most
 * `maxSize` each) at the end of the turn (see Turn; each batch has its own unless given a shared
 * one). Under load, the calls whose answers arrived in the same turn then cost one Redis command and
 * one write instead of one each. A failed batch fails each of its calls with the batch's error.
 */
export class TurnBatch<Item, Result> {
  private items: Item[] = [];
  private waiters: { resolve: (result: Result) => void; reject: (err: unknown) => void }[] = [];

  constructor(
    private readonly runBatch: (items: Item[]) => Promise<Result[]>,
    private readonly maxSize: number,
    private readonly turn: Turn = new Turn(),
  ) {}

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      if (this.items.length === 0) this.turn.schedule(this.flush);
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
