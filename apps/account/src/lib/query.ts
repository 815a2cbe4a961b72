/** The query without its empty parameters: `?model_name=` means "not filtered", as new-api's UI sends them. */
export function presentParams(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== '' && value !== undefined));
}
