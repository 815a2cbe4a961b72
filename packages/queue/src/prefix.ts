/** Keys live under the deployment's Redis prefix, so tests and co-hosted installs never collide. */
export function bullPrefix(redisPrefix: string): string {
  return `${redisPrefix}bull`;
}
