import { type ReactNode, useId } from 'react';

/** A table column of a chart's text alternative. */
export interface ChartColumn<Row> {
  header: string;
  cell: (row: Row) => string;
}

interface ChartFigureProps<Row> {
  /** The figure's heading and accessible name, e.g. "Spend per day". */
  title: string;
  /** One sentence for everyone (shown under the chart). */
  summary: string;
  /** The chart's data as a table for screen readers: the chart itself is hidden from them. */
  rows: readonly Row[];
  rowKey: (row: Row) => string | number;
  columns: readonly ChartColumn<Row>[];
  /** The recharts chart (drawn for sighted users only). */
  children: ReactNode;
}

/**
 * A chart with its text alternative: a visible one-line summary and the data as a table that only
 * assistive technology sees (the drawn chart is aria-hidden, so it is not read twice).
 */
export function ChartFigure<Row>({ title, summary, rows, rowKey, columns, children }: ChartFigureProps<Row>) {
  const titleId = useId();
  return (
    <figure className="panel chart-figure" aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      <div className="chart" aria-hidden="true">{children}</div>
      <figcaption className="muted">{summary}</figcaption>
      {/* Wrapped: a table ignores the clipping box of .visually-hidden and would stretch the page. */}
      <div className="visually-hidden">
        <table>
          <caption>{title}</caption>
          <thead>
            <tr>{columns.map((column) => <th key={column.header} scope="col">{column.header}</th>)}</tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((column, index) => index === 0
                  ? <th key={column.header} scope="row">{column.cell(row)}</th>
                  : <td key={column.header}>{column.cell(row)}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
