import { renderDatabaseCost } from '../src/database-cost';

describe('the PostgreSQL cost lines', () => {
  it('divide the WAL bytes and the rows of each table by the billed calls', () => {
    const lines = renderDatabaseCost({
      calls: 1000,
      walBytes: 1_048_576n,
      tables: [
        { table: 'logs', inserted: 1000n, updated: 0n, deleted: 0n },
        { table: 'users', inserted: 0n, updated: 20n, deleted: 0n },
      ],
    });
    expect(lines[0]).toBe('1000 billed calls: WAL 1049 bytes per call (1.0 MiB in all), rows written 1.020 per call');
    expect(lines).toContain('| logs | 1.000 | 0.000 | 0.000 |');
    expect(lines).toContain('| users | 0.000 | 0.020 | 0.000 |');
  });

  it('say so when no call succeeded', () => {
    expect(renderDatabaseCost({ calls: 0, walBytes: 10n, tables: [] })).toEqual(['no successful call: nothing to divide by']);
  });
});
