// The benchmark's model provider, in a process of its own so its work is not counted against the
// load generator. Prints `{"url": ...}` on its first stdout line, then serves until SIGTERM / SIGINT.
// With FAKE_VERTEX_SERVICE_ACCOUNT_FILE set, first writes there the key file of its Vertex service
// account (for a Vertex channel on it: the key pair is this process's own, made when first asked).
import { writeFileSync } from 'node:fs';
import { fakeVertexServiceAccount, startFakeUpstream } from '@modelgate/testing/fake-upstream';

async function main(): Promise<void> {
  const chunks = Number(process.env.FAKE_CHUNKS ?? 20);
  const chunkDelayMs = Number(process.env.FAKE_CHUNK_DELAY_MS ?? 20);
  const upstream = await startFakeUpstream({ record: false, verifySignatures: false, chunks, chunkDelayMs });
  const serviceAccountFile = process.env.FAKE_VERTEX_SERVICE_ACCOUNT_FILE;
  if (serviceAccountFile) writeFileSync(serviceAccountFile, fakeVertexServiceAccount(upstream.url), { mode: 0o600 });
  process.stdout.write(`${JSON.stringify({ url: upstream.url })}\n`);
  const stop = () => {
    upstream.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`fake upstream failed to close: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`fake upstream failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
