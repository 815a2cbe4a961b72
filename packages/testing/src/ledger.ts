// The ledger invariant check lives with the ledger module; tests import it from here as before.
export { type LedgerMismatch, ledgerMismatches } from '@modelgate/db';
