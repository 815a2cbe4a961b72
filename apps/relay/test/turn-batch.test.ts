import { Turn, TurnBatch } from '../src/features/billing/turn-batch';

describe('TurnBatch: the calls of one event-loop turn run together', () => {
  it('runs the calls made in one turn as batches of at most maxSize, each call getting its own result', async () => {
    const batches: number[][] = [];
    const doubler = new TurnBatch<number, number>(async (items) => {
      batches.push(items);
      return items.map((item) => item * 2);
    }, 3);
    const results = await Promise.all([1, 2, 3, 4, 5].map((item) => doubler.add(item)));
    expect(results).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2, 3], [4, 5]]);
    // A later turn starts a new batch.
    expect(await doubler.add(6)).toBe(12);
    expect(batches).toEqual([[1, 2, 3], [4, 5], [6]]);
  });

  it('fails every call of a failed batch, and only those', async () => {
    const failing = new TurnBatch<number, number>(async (items) => {
      if (items.includes(1)) throw new Error('redis is away');
      return items;
    }, 2);
    const outcomes = await Promise.allSettled([1, 2, 3].map((item) => failing.add(item)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toEqual(new Error('redis is away'));
  });

  it('runs the batches sharing a turn in one callback, their writes held until all of them ran', async () => {
    const events: string[] = [];
    const socket = { cork: () => events.push('cork'), uncork: () => events.push('uncork') };
    const turn = new Turn(() => socket);
    const batch = (name: string) =>
      new TurnBatch<number, number>(async (items) => {
        events.push(`${name} ${items.join(',')}`);
        return items;
      }, 10, turn);
    const reservations = batch('reserve');
    const settlements = batch('settle');
    await Promise.all([reservations.add(1), settlements.add(2), reservations.add(3)]);
    expect(events).toEqual(['cork', 'reserve 1,3', 'settle 2', 'uncork']);
  });
});
