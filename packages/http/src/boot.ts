import { errorSummary } from './errors';

/**
 * The end of every service's boot (`main().catch(exitOnBootFailure('relay'))`): one line naming the
 * cause on stderr, no stack (a boot failure is nearly always configuration: a setting, a database
 * without its migrations, an unreachable dependency), and exit code 1.
 */
export function exitOnBootFailure(service: string): (err: unknown) => never {
  return (err) => {
    process.stderr.write(`[${service}] cannot start: ${errorSummary(err)}\n`);
    process.exit(1);
  };
}
