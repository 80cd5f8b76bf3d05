import { AGENT_MIN_SCORE } from '@agent-platform/core';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

// The agent's relevance floor, with the built-in embedder and the default search (hybrid):
// a question the documents do not cover gets no sources and no excerpts in the model's context.
let upstream: FakeUpstream;
let s: TestServer;
let client: OpenAI;
let projectId: string;

const DOCS = [
  { fileName: 'refunds.md', content: '# Refunds\n\nACME refunds purchases within 30 days of delivery. Send the item back with the receipt.' },
  { fileName: 'shipping.md', content: '# Shipping\n\nOrders leave the warehouse within two working days; express delivery arrives the next day.' },
];
const UNRELATED = 'What is the weather like in Paris today?';
const RELATED = 'How long do I have to get a refund?';

type Sent = { messages: { role: string; content: string }[] };
const sources = (completion: unknown) => (completion as { sources: { fileName: string; score: number }[] }).sources;
const ask = (content: string) => client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content }] });

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Shop', model: 'gpt-test', provider: 'openai', instructions: 'You are the shop assistant.' } })).body.project.id;
  for (const doc of DOCS) {
    const res = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileType: 'md', sourceType: 'upload', ...doc } });
    expect((await s.indexed(res.body.documentId)).status).toBe('completed');
  }
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

describe('the relevance floor of the agent', () => {
  it('an unrelated question: no sources, and no excerpts in the upstream request', async () => {
    // Without a floor the search does return the documents (the defect): they are only below it.
    const all = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: UNRELATED } });
    expect(all.body.documents.length).toBeGreaterThan(0);
    expect(Math.max(...all.body.documents.map((d: { score: number }) => d.score))).toBeLessThan(AGENT_MIN_SCORE);

    const completion = await ask(UNRELATED);
    expect(sources(completion)).toEqual([]);
    const sent = upstream.requests[0] as Sent;
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are the shop assistant.' });
    expect(JSON.stringify(sent.messages)).not.toMatch(/refunds\.md|shipping\.md|excerpts/);
  });

  it('a related question still gets its chunk, in the context and as a source', async () => {
    const completion = await ask(RELATED);
    expect(sources(completion)[0]).toMatchObject({ index: 1, fileName: 'refunds.md' });
    expect(sources(completion).every((source) => source.score >= AGENT_MIN_SCORE)).toBe(true);
    const sent = upstream.requests[0] as Sent;
    expect(sent.messages[0]?.content).toContain('[1] refunds.md');
    expect(sent.messages[0]?.content).toContain('within 30 days of delivery');
  });

  it("the project's minScore replaces the default: 0 gives the agent every hit", async () => {
    await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { minScore: 0 } } });
    try {
      const completion = await ask(UNRELATED);
      expect(sources(completion).length).toBeGreaterThan(0);
      expect((upstream.requests[0] as Sent).messages[0]?.content).toContain('excerpts');
    } finally {
      await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { minScore: null } } });
    }
  });
});
