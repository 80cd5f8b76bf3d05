import { AGENT_MIN_SCORE } from '@agent-platform/core/schemas';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

// The agent's relevance floor, with the built-in embedder and the default search (hybrid): a
// question the documents do not cover gets no sources and no excerpts in the model's context,
// and knowledge scores mean the same whatever the question (no best hit stretched to 1.0).
let upstream: FakeUpstream;
let s: TestServer;
let client: OpenAI;
let projectId: string;

const DOCS = [
  {
    fileName: 'refunds.md',
    content:
      '# Refunds\n\nACME refunds purchases within 30 days of delivery. Send the item back in its original packaging with the receipt; the money is returned to the card used to pay within five working days.',
  },
  {
    fileName: 'shipping.md',
    content: '# Shipping\n\nOrders leave the warehouse within two working days. Standard delivery takes three to five days; express delivery arrives the next day for a fee of 9 euros.',
  },
];
// Each of these got both documents as sources, at hybrid scores 1.0 and 0.73, before scores were
// calibrated ("a" matched the documents' "a", and the best keyword hit of any list scored 1.0).
const UNRELATED = ['Tell me a joke about cats', 'What is a dog?', 'Write a poem', 'What is the weather like in Paris today?'];
const RELATED = [
  { question: 'How long do I have to get a refund?', fileName: 'refunds.md', text: 'within 30 days of delivery' },
  { question: 'How much does express shipping cost?', fileName: 'shipping.md', text: 'for a fee of 9 euros' },
];

type Sent = { messages: { role: string; content: string }[] };
type Hit = { score: number; metadata: { fileName: string } };
const sources = (completion: unknown) => (completion as { sources: { fileName: string; score: number }[] }).sources;
const ask = (content: string) => client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content }] });
const search = async (query: string, extra: Record<string, unknown> = {}): Promise<Hit[]> => {
  const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query, topK: 10, ...extra } });
  expect(res.status).toBe(200);
  return res.body.documents;
};

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
  it.each(UNRELATED)('%s: no sources, and no excerpts in the upstream request', async (question) => {
    // Whatever the search still finds scores far below the floor: nothing is stretched to 1.0.
    for (const hit of await search(question, { minScore: 0 })) expect(hit.score).toBeLessThan(AGENT_MIN_SCORE);

    const completion = await ask(question);
    expect(sources(completion)).toEqual([]);
    const sent = upstream.requests[0] as Sent;
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are the shop assistant.' });
    expect(JSON.stringify(sent.messages)).not.toMatch(/refunds\.md|shipping\.md|excerpts/);
  });

  it.each(RELATED)('$question: its document, in the context and as a source', async ({ question, fileName, text }) => {
    const completion = await ask(question);
    expect(sources(completion)[0]).toMatchObject({ index: 1, fileName });
    expect(sources(completion).every((source) => source.score >= AGENT_MIN_SCORE)).toBe(true);
    const sent = upstream.requests[0] as Sent;
    expect(sent.messages[0]?.content).toContain(`[1] ${fileName}`);
    expect(sent.messages[0]?.content).toContain(text);
  });

  it('floors every search type: semantic and mrr projects get no sources for the unrelated questions either', async () => {
    for (const searchType of ['semantic', 'mrr'] as const) {
      await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { searchType } } });
      try {
        for (const question of UNRELATED) expect(sources(await ask(question)), `${searchType}: ${question}`).toEqual([]);
        expect(sources(await ask(RELATED[0]?.question as string))[0], searchType).toMatchObject({ fileName: 'refunds.md' });
      } finally {
        await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: {} } });
      }
    }
  });

  it("the project's minScore replaces the default: 0 gives the agent every hit that scores above 0", async () => {
    await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { minScore: 0 } } });
    try {
      // "delivery" is in both documents: weak matches, but matches, of a question about cats.
      const completion = await ask('A poem about the delivery of cats');
      expect(sources(completion).length).toBeGreaterThan(0);
      expect(sources(completion).every((source) => source.score > 0 && source.score < AGENT_MIN_SCORE)).toBe(true);
      expect((upstream.requests[0] as Sent).messages[0]?.content).toContain('excerpts');
    } finally {
      await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { minScore: null } } });
    }
  });
});

describe('calibrated search scores', () => {
  it('the same match scores the same, whatever else the question asks or the list holds', async () => {
    const express = async (query: string) => (await search(query)).find((h) => h.metadata.fileName === 'shipping.md')?.score ?? 0;
    const focused = await express('express delivery fee');
    expect(focused).toBeGreaterThan(AGENT_MIN_SCORE);
    // The same words inside a question about something else: its score falls far below (before,
    // the best hit of every list scored 1.0).
    expect(await express('a poem about a dog, the express delivery fee and the weather in Paris')).toBeLessThan(focused);
    const best = (await search('Write a poem about a dog'))[0]?.score ?? 0;
    expect(best).toBeLessThan(0.1);
  });

  it('minScore on the search route filters on calibrated scores', async () => {
    const all = await search('When does my refund arrive on my card?', { minScore: 0 });
    expect(all[0]?.metadata.fileName).toBe('refunds.md');
    const floor = AGENT_MIN_SCORE;
    const above = await search('When does my refund arrive on my card?', { minScore: floor });
    expect(above.map((h) => h.score)).toEqual(all.filter((h) => h.score >= floor).map((h) => h.score));
    expect(above.length).toBeGreaterThan(0);
    expect(await search('Tell me a joke about cats', { minScore: floor })).toEqual([]);
  });

  it('mrr never answers a hit scoring 0, however many are asked for', async () => {
    for (const query of ['refund delivery', 'Tell me a joke about cats', 'shipping']) {
      for (const hit of await search(query, { searchType: 'mrr', topK: 20, minScore: 0 })) expect(hit.score, query).toBeGreaterThan(0);
    }
  });
});
