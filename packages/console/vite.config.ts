import { defineConfig } from 'vite';

/**
 * The console is built into dist/ as static files the server package serves under /console/:
 * index.html (never cached) and assets/ whose names carry a content hash (cached for good).
 * Nothing is inlined into the HTML (no inline script or style, so the page runs under a
 * Content-Security-Policy without 'unsafe-inline'), nothing comes from another origin.
 */
export default defineConfig({
  root: 'src',
  base: '/console/',
  publicDir: false,
  // Preact's automatic JSX runtime through Vite's own transform (no Babel plugin needed).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `pnpm --filter @agent-platform/console dev`: the app with hot reload, its API calls passed to
  // a running server (AGENT_PLATFORM_URL, default http://127.0.0.1:3000).
  server: { proxy: { '/api': process.env.AGENT_PLATFORM_URL ?? 'http://127.0.0.1:3000' } },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
    // Images and fonts as files, never data: URLs (the CSP allows 'self' only).
    assetsInlineLimit: 0,
    // Every browser the console supports has <link rel="modulepreload">.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rolldownOptions: {
      // The editor's lazily loaded chunks named for what they hold (a chunk is otherwise named
      // after its entry file, `dist`, for the grammar packages).
      output: {
        chunkFileNames: (chunk) => {
          const has = (pkg: string) => chunk.moduleIds.some((id) => id.includes(`/node_modules/${pkg}/`));
          const name = has('@lezer/javascript') ? 'editor-javascript' : has('@lezer/python') ? 'editor-python' : has('@lezer/lr') ? 'editor-parser' : chunk.name;
          return `assets/${name}-[hash].js`;
        },
      },
    },
  },
});
