import { defineConfig } from 'vite'

// The aggregator serves dist/ as it is: relative asset URLs keep it working behind a path prefix too.
export default defineConfig({
  base: './',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 200 },
})
