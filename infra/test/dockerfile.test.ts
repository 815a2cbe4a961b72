// infra/docker/Dockerfile and .dockerignore, statically (no Docker engine here).
import { existsSync } from 'node:fs';
import { isDockerIgnored, parseDockerfile, readRepoFile, repoPath, type DockerStage } from './support';

const dockerfile = parseDockerfile(readRepoFile('infra', 'docker', 'Dockerfile'));
const dockerignore = readRepoFile('.dockerignore');
const rootPackage = JSON.parse(readRepoFile('package.json')) as {
  packageManager: string;
  engines: { node: string };
  devDependencies: Record<string, string>;
};

function stage(name: string): DockerStage {
  const found = dockerfile.stages.find((s) => s.name === name);
  if (!found) throw new Error(`no stage ${name}`);
  return found;
}

const args = (s: DockerStage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const runtime = stage('runtime');

describe('Dockerfile', () => {
  it('is multi-stage: prune, full build and production dependencies apart from the runtime image', () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual(['base', 'prune', 'build', 'prod-deps', 'runtime']);
    // The runtime starts again from the plain Node image: no pnpm, turbo, sources or dev tools.
    expect(runtime.from).toBe('${NODE_IMAGE}');
    expect(dockerfile.preamble).toContainEqual({ keyword: 'ARG', args: expect.stringMatching(/^NODE_IMAGE=node:\d+-/) });
  });

  it('runs the Node.js major version that package.json declares in engines, and bundles for it', () => {
    const nodeImage = dockerfile.preamble.find((i) => i.keyword === 'ARG' && i.args.startsWith('NODE_IMAGE='))?.args;
    const major = /^NODE_IMAGE=node:(\d+)-/.exec(nodeImage ?? '')?.[1];
    expect(rootPackage.engines.node).toBe(`>=${major}`);
    expect(args(stage('build'), 'RUN').join('\n')).toContain(`--target=node${major} `);
    expect(readRepoFile('scripts', 'build-app.mjs')).toContain(`target: 'node${major}'`);
  });

  it('is parametrised by APP and refuses values other than the five services and migrate', () => {
    for (const name of ['prune', 'build', 'runtime']) expect(args(stage(name), 'ARG')).toContain('APP');
    const prune = args(stage('prune'), 'RUN').join('\n');
    expect(prune).toContain('edge|relay|account|worker|console) package="@modelgate/${APP}"');
    expect(prune).toContain('migrate) package="@modelgate/db"');
    expect(prune).toMatch(/\*\) echo .* >&2; exit 1/);
    expect(prune).toContain('turbo prune "${package}" --docker');
  });

  it('installs from the lockfile with the pnpm and turbo versions the repository pins', () => {
    const baseArgs = args(stage('base'), 'ARG');
    expect(rootPackage.packageManager).toBe(`pnpm@${baseArgs.find((a) => a.startsWith('PNPM_VERSION='))?.split('=')[1]}`);
    expect(rootPackage.devDependencies.turbo?.replace(/^[\^~]/, '')).toBe(
      baseArgs.find((a) => a.startsWith('TURBO_VERSION='))?.split('=')[1],
    );
    expect(args(stage('build'), 'RUN').join('\n')).toContain('pnpm install --frozen-lockfile');
  });

  it('ships production dependencies only', () => {
    const deploy = args(stage('prod-deps'), 'RUN').join('\n');
    expect(deploy).toMatch(/pnpm --filter "\$\(cat package-name\)" deploy --prod /);
    // The runtime image takes node_modules from prod-deps and only the bundle (dist, prisma) from build.
    const copies = args(runtime, 'COPY');
    expect(copies).toEqual(['--from=prod-deps /release/ ./', '--from=build /release/ ./', 'infra/docker/probe.mjs ./probe.mjs']);
    const buildRelease = args(stage('build'), 'RUN').join('\n').match(/cp -r \S+ \/release\/[^\s;]+/g);
    expect(buildRelease).toEqual(['cp -r packages/db/prisma /release/prisma', 'cp -r "apps/${APP}/dist" /release/dist']);
    expect(args(runtime, 'RUN')).toEqual([]);
  });

  it('runs as a non-root user, in production mode, with a health check on /healthz', () => {
    const keywords = runtime.instructions.map((i) => i.keyword);
    const user = args(runtime, 'USER');
    expect(user).toEqual(['node']);
    expect(keywords.indexOf('USER')).toBeLessThan(keywords.indexOf('CMD'));
    expect(args(runtime, 'ENV').join(' ')).toContain('NODE_ENV=production');
    expect(args(runtime, 'HEALTHCHECK')).toEqual([expect.stringMatching(/CMD \["node", "\/app\/probe\.mjs", "\/healthz"\]$/)]);
    expect(args(runtime, 'CMD')).toEqual(['["node", "--enable-source-maps", "dist/index.js"]']);
  });

  it('copies only files that exist and that .dockerignore lets into the build context', () => {
    const fromContext = dockerfile.stages
      .flatMap((s) => args(s, 'COPY'))
      .filter((a) => !a.startsWith('--from='))
      .map((a) => a.split(' '))
      .map(([source = '']) => source)
      .filter((source) => source !== '.');
    expect(fromContext).toEqual(['tsconfig.base.json', 'scripts/build-app.mjs', 'infra/docker/probe.mjs']);
    const needed = [
      ...fromContext,
      'package.json',
      'pnpm-lock.yaml',
      'pnpm-workspace.yaml',
      '.npmrc',
      'turbo.json',
      'packages/db/scripts/migrate.ts',
      'packages/db/prisma/schema.prisma',
      'packages/db/prisma/migrations',
    ];
    for (const path of needed) {
      expect({ path, exists: existsSync(repoPath(path)), ignored: isDockerIgnored(dockerignore, path) }).toEqual({
        path,
        exists: true,
        ignored: false,
      });
    }
  });
});

describe('.dockerignore', () => {
  it('keeps installed dependencies, build output, git history and secrets out of the build context', () => {
    for (const path of [
      'node_modules',
      'apps/relay/node_modules/express',
      'apps/edge/dist/index.js',
      'packages/db/src/generated/prisma/client.ts',
      '.git',
      '.env',
      '.env.production',
      'apps/account/test/app.test.ts',
      'apps/console/screenshots/keys-phone.png',
    ]) {
      expect({ path, ignored: isDockerIgnored(dockerignore, path) }).toEqual({ path, ignored: true });
    }
    for (const path of ['.env.example', 'apps/relay/src/index.ts', 'apps/console/web/src/main.tsx', 'apps/console/vite.config.mjs', 'packages/db/prisma/migrations', 'infra/docker/probe.mjs']) {
      expect({ path, ignored: isDockerIgnored(dockerignore, path) }).toEqual({ path, ignored: false });
    }
  });
});
