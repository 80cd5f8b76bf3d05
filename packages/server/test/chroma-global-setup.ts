import type { TestProject } from 'vitest/node';
import { startChromaServer } from '../../adapters-vector/test/fixtures/chroma-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's Chroma server (`http://127.0.0.1:PORT`), the shared vector store of test servers in PostgreSQL mode; '' when none was started. */
    chromaUrl: string;
  }
}

/**
 * vitest global setup: when the project's servers run on PostgreSQL (AGENT_PLATFORM_TEST_STORAGE
 * =postgres in the project's `env`, or in the environment of the run), one real Chroma server
 * (the chromadb package's) for the whole run, stopped at its end. That mode refuses the built-in
 * vector store (a file on one machine), so the servers need a vector store every instance
 * reaches, as in production. Other runs start nothing.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const mode = project.config.env?.AGENT_PLATFORM_TEST_STORAGE ?? process.env.AGENT_PLATFORM_TEST_STORAGE;
  if (mode !== 'postgres') {
    project.provide('chromaUrl', '');
    return undefined;
  }
  const chroma = await startChromaServer();
  project.provide('chromaUrl', chroma.url);
  return () => chroma.dispose();
}
