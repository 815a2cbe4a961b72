// The console's single-page app: sources in web/, built to dist/web (served by src/app.ts).
// `pnpm dev` here serves it with hot reload and sends /api to the edge of a running `pnpm start`.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  plugins: [react()],
  // The API reference page's renderer is one lazily loaded 1.6 MB chunk; the app itself is far below.
  build: { outDir: '../dist/web', emptyOutDir: true, assetsDir: 'assets', sourcemap: true, chunkSizeWarningLimit: 2000 },
  server: { port: 5173, proxy: { '/api': process.env.EDGE_URL ?? 'http://127.0.0.1:3000' } },
});
