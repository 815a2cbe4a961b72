const dateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' });

/** Unix seconds as local date and time, e.g. "Nov 25, 2026, 3:04 PM". */
export function formatDateTime(unixSeconds: number): string {
  return dateTime.format(new Date(unixSeconds * 1000));
}

/** Unix seconds as a local date, e.g. "Nov 25, 2026". */
export function formatDate(unixSeconds: number): string {
  return dateOnly.format(new Date(unixSeconds * 1000));
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A `datetime-local` input's value (local time) as unix seconds; undefined when empty or invalid. */
export function localInputToSeconds(value: string): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** Unix seconds as a `datetime-local` input's value (local time, minutes). */
export function secondsToLocalInput(unixSeconds: number): string {
  const date = new Date(unixSeconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
