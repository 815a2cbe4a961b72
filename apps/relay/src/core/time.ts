/** Epoch seconds: the `created` of an answer the relay dates itself. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
