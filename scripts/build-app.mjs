// Bundles one app (run from its folder) into dist/index.js: our workspace packages are inlined (they
// ship TypeScript source), every npm dependency stays external and is required at run time.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'externalize-npm-dependencies',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@modelgate/') ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
