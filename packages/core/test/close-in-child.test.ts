import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A script that uses the built packages as a library, in a folder outside the workspace (its
// node_modules links them, resolved by their default export conditions: dist/), must end by
// itself with exit code 0 once `close()` settled. Under top-level await, a close() whose promise
// waits on something that no longer keeps the event loop alive (an unref'd child process) ends
// the process with code 13 instead, and "closed" is never printed.

const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));
const LINKED = ['core', 'adapters-storage', 'adapters-vector', 'adapters-embedding'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-close-'));
  await mkdir(join(dir, 'node_modules', '@agent-platform'), { recursive: true });
  for (const name of LINKED) await symlink(join(PACKAGES, name), join(dir, 'node_modules', '@agent-platform', name));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'close-check', private: true, type: 'module' }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `body` as an ES module in the folder; its exit code and output. */
async function runScript(name: string, body: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(dir, `${name}.mjs`);
  await writeFile(file, body);
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: dir, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

const PLATFORM = (storage: string, vectors: string) => `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentPlatform } from '@agent-platform/core';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
const dir = mkdtempSync(join(tmpdir(), 'ap-close-data-'));
${storage}
const platform = new AgentPlatform({ storage, knowledge: { vectors: await builtinVectorStore(${vectors}), embedder: builtinEmbedder() } });
await platform.start();
const { userId } = await platform.createUserWithKey({ name: 'script' });
const me = { userId };
const { project } = await platform.createProject(me, { name: 'Support', model: 'gpt-4o-mini', provider: 'openai' });
const created = await platform.createDocument(me, { projectId: project.id, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: '# Refunds\\n\\nRefunds are paid within 30 days.' });
for (let status = created.status; status !== 'completed'; status = (await platform.getDocument(me, created.documentId)).document.status) {
  if (status === 'failed') throw new Error('indexing failed');
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const found = await platform.search(me, { projectId: project.id, query: 'refund' });
console.log('found ' + found.documents.length);
await platform.close();
console.log('closed');
`;

describe('close() of a script using the packages', () => {
  it('a platform with SQLite storage and the built-in embedder and vector store: index, search, close, exit 0', async () => {
    const result = await runScript(
      'sqlite',
      PLATFORM(
        "import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';\nconst storage = await sqliteStorage({ path: join(dir, 'agent-platform.db') });",
        "{ dir: join(dir, 'vectors') }",
      ),
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('found 1\nclosed\n');
    expect(result.code).toBe(0);
  });

  it('the same with in-memory storage and vectors', async () => {
    const result = await runScript('memory', PLATFORM("import { memoryStorage } from '@agent-platform/adapters-storage/memory';\nconst storage = memoryStorage();", ''));
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('found 1\nclosed\n');
    expect(result.code).toBe(0);
  });

  it("the document readers alone: close() settles once their (idle, unref'd) processes have exited", async () => {
    const result = await runScript(
      'readers',
      `import { DocumentProcesses } from '@agent-platform/core/internal';
const readers = new DocumentProcesses();
const reading = await readers.read({ fileName: 'a.md', bytes: new TextEncoder().encode('# A\\n\\nText.') }, { chunkSize: 512, chunkOverlap: 64 });
console.log('chunks ' + reading.chunks.length);
await readers.close();
console.log('closed');
`,
    );
    expect(result.stdout).toBe('chunks 1\nclosed\n');
    expect(result.code).toBe(0);
  });

  it('an open SQLite database does not keep the process alive (its checkpoint worker is idle), and opening it completes', async () => {
    const result = await runScript(
      'sqlite-open',
      `import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
const storage = await sqliteStorage({ path: join(mkdtempSync(join(tmpdir(), 'ap-close-data-')), 'agent-platform.db') });
console.log('opened ' + typeof storage.close);
`,
    );
    expect(result.stdout).toBe('opened function\n');
    expect(result.code).toBe(0);
  });
});
