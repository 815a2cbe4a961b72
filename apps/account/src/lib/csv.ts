import { describeError, drainedOrClosed } from '@modelgate/http';
import type { Request, Response } from 'express';
import type { AccountDeps } from '../deps';

export type CsvCell = string | number | boolean | null;

/** Leading characters that make a spreadsheet read a cell as a formula (or hide what follows). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell: text that a spreadsheet would run as a formula gets a leading `'` (OWASP's CSV injection
 * advice); numbers and booleans are written bare, so numeric columns stay numbers. Quoted per RFC 4180.
 */
function csvCell(value: CsvCell): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CRLF-terminated record (RFC 4180). */
export function csvRecord(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/**
 * Streams CSV text as an attachment, writing each chunk as it comes and waiting while the client
 * reads slower than we produce; stops pulling chunks (no more queries) once the client is gone.
 * An error before the first chunk propagates (the usual envelope answer); after it, the status is
 * sent, so the connection is cut: the client sees a failed download, not a complete-looking file.
 */
export async function sendCsv(deps: AccountDeps, req: Request, res: Response, filename: string, chunks: AsyncIterable<string>): Promise<void> {
  let started = false;
  try {
    for await (const chunk of chunks) {
      if (!started) {
        res.status(200);
        res.setHeader('Content-Type', 'text/csv; charset=utf-8');
        res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
        res.setHeader('Cache-Control', 'no-store');
        started = true;
      }
      if (!res.write(chunk)) await drainedOrClosed(res);
      // Leaving the loop ends the generator, so no further page is read for a client that left.
      if (res.destroyed) return;
    }
  } catch (err) {
    if (!started) throw err;
    deps.logger.error({ requestId: req.requestId, error: describeError(err) }, 'CSV export failed after its first rows');
    res.destroy();
    return;
  }
  res.end();
}
