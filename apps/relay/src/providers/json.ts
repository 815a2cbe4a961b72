/** A parsed JSON value that is an object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value as an object to read fields from: {} when it is not one. */
export function objectOf(value: unknown): Record<string, unknown> {
  return isJsonObject(value) ? value : {};
}

/** JSON text parsed, when it is an object; undefined when it is not JSON or is another value. */
export function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isJsonObject(parsed) ? parsed : undefined;
}
