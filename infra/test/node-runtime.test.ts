// infra/node-runtime.json itself: the memory settings that pnpm start, pnpm bench, compose and the
// Kubernetes manifests give the services (compose.test.ts and kustomize.test.ts check those two).
import { spawnSync } from 'node:child_process';
import { nodeRuntime, SERVICES } from './support';

const runtime = nodeRuntime();

describe('infra/node-runtime.json', () => {
  it('says why, and names only Modelgate services, with string values (environment variables)', () => {
    expect(runtime.why).toEqual(expect.any(String));
    expect(Object.keys(runtime.services).filter((name) => !(SERVICES as readonly string[]).includes(name))).toEqual([]);
    for (const settings of Object.values(runtime.services)) {
      for (const value of Object.values(settings)) expect(value).toEqual(expect.any(String));
    }
  });

  it.each(Object.entries(runtime.services))('%s: never caps the old space (a 10 MB prompt must still fit)', (_name, settings) => {
    expect(settings.NODE_OPTIONS ?? '').not.toMatch(/--max-old-space-size|--max-heap-size/);
  });

  it.each(Object.entries(runtime.services))('%s: Node accepts its NODE_OPTIONS', (_name, settings) => {
    const result = spawnSync(process.execPath, ['-e', '0'], { env: { ...process.env, ...settings }, encoding: 'utf8' });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
