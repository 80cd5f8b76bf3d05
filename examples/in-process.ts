/**
 * Agent Platform inside a Node app, no server: the engine with in-memory storage.
 * Run: pnpm --filter @agent-platform/examples in-process
 */
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform, isPlatformError } from '@agent-platform/core';

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const platform = new AgentPlatform({ storage: memoryStorage() });

  // A user is whoever owns a key; every call names its caller.
  const { userId } = await platform.createUserWithKey({ name: 'my app' });
  const me = { userId };

  const { project } = await platform.createProject(me, { name: 'Support bot', model: 'gpt-4o-mini', provider: 'openai' });
  log(`created ${project.id} (${project.name})`);

  await platform.updateProject(me, project.id, { description: 'Answers questions about our product' });

  const page = await platform.listProjects(me, { searchWord: 'support', limit: 10 });
  log(`found ${page.total}: ${page.projects.map((p) => `${p.name} — ${p.description}`).join(', ')}`);

  try {
    await platform.createProject(me, { name: '', model: 'gpt-4o-mini', provider: 'openai' });
  } catch (error) {
    if (isPlatformError(error)) log(`rejected: ${error.code}: ${error.message}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
