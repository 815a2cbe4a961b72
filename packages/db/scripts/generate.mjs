// Runs `prisma generate` without the native schema engine, which cannot be downloaded here and is
// not needed to generate the client: Prisma only checks that the configured binary exists.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const stubDir = join(tmpdir(), 'modelgate-prisma');
const stub = join(stubDir, 'schema-engine-stub');
if (!existsSync(stub)) {
  mkdirSync(stubDir, { recursive: true });
  writeFileSync(stub, '#!/bin/sh\necho "native schema engine not available; use pnpm db:migrate" >&2\nexit 1\n');
  chmodSync(stub, 0o755);
}
const result = spawnSync('prisma', ['generate'], {
  stdio: 'inherit',
  shell: process.platform === 'win32',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || stub,
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  },
});
process.exit(result.status ?? 1);
