import type { ReactNode } from 'react';

/** One figure in a `.cards` grid: what it is, the value, and an optional line under it. */
export function StatCard({ label, value, detail }: { label: string; value: ReactNode; detail?: ReactNode }) {
  return (
    <div className="card">
      <div className="label">{label}</div>
      <div className="value">{value}</div>
      {detail !== undefined && <div className="muted detail">{detail}</div>}
    </div>
  );
}
