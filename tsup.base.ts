import type { Options } from 'tsup';

/** What every package's tsup build shares: ESM for Node 20 with .d.ts and source maps. */
export const packageBuild = {
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The base config, without the workspace's `agent-platform:source` condition: other packages' types come from their dist.
  tsconfig: '../../tsconfig.base.json',
} satisfies Options;
