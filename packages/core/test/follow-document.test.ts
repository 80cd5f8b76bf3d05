import { describe, expect, it, vi } from 'vitest';
import { followDocument } from '../src/knowledge/follow-document.js';
import type { IndexingEvent, IndexingListener } from '../src/knowledge/indexing-events.js';
import type { DocumentRecord } from '../src/storage/types.js';

const row = (status: DocumentRecord['status'], error: string | null = null) => ({ id: 'doc_1', status, error }) as DocumentRecord;

/** A document whose row reads as `rows` says, one per read (the last one stays), and whose events the test sends. */
function source(rows: (DocumentRecord | undefined)[]) {
  let listener: IndexingListener | undefined;
  let reads = 0;
  let stopped = false;
  return {
    subscribe: (_id: string, l: IndexingListener) => {
      listener = l;
      return () => {
        stopped = true;
      };
    },
    read: async () => rows[Math.min(reads++, rows.length - 1)],
    send: (event: IndexingEvent) => listener?.(event),
    get reads() {
      return reads;
    },
    get stopped() {
      return stopped;
    },
  };
}

/** Resolves at the next turn of the event loop, after every promise settled meanwhile. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function collect(events: AsyncIterable<IndexingEvent>) {
  const out: IndexingEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('followDocument', () => {
  it('passes on the events of the run as they come, and ends with its final event', async () => {
    const doc = source([row('processing')]);
    const events = await followDocument({ documentId: 'doc_1', ...doc, pollMs: 60_000 });
    const seen = collect(events as AsyncIterable<IndexingEvent>);
    doc.send({ type: 'progress', progress: 60, message: 'Creating embeddings' });
    await new Promise((r) => setTimeout(r, 10));
    doc.send({ type: 'progress', progress: 90, message: 'Storing vectors' });
    doc.send({ type: 'complete', progress: 100, message: 'Document indexed successfully', documentId: 'doc_1' });
    expect((await seen).map((e) => ('progress' in e ? e.progress : e.type))).toEqual([60, 90, 100]);
    expect(doc.stopped).toBe(true);
  });

  it('ends with the final event from the row when the event itself was missed (delivery is at most once)', async () => {
    const doc = source([row('processing'), row('processing'), row('failed', 'Failed to index document: boom')]);
    const events = (await followDocument({ documentId: 'doc_1', ...doc, pollMs: 5 })) as AsyncIterable<IndexingEvent>;
    expect(await collect(events)).toEqual([{ type: 'error', message: 'Failed to index document: boom', documentId: 'doc_1' }]);
    expect(doc.reads).toBe(3);
  });

  it('says so when the document is deleted meanwhile, and answers undefined for a document that is not there', async () => {
    const deleted = source([row('pending'), undefined]);
    const events = (await followDocument({ documentId: 'doc_1', ...deleted, pollMs: 5 })) as AsyncIterable<IndexingEvent>;
    expect(await collect(events)).toEqual([{ type: 'error', message: 'Failed to index document: the document was deleted', documentId: 'doc_1' }]);
    const missing = source([undefined]);
    expect(await followDocument({ documentId: 'doc_1', ...missing })).toBeUndefined();
    expect(missing.stopped).toBe(true);
  });

  it('ends at once when its signal aborts, and stops listening', async () => {
    // The poll's clock stands still: only the abort can end the iteration, and "at once" is
    // before the next turn of the event loop (setImmediate stays real).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const doc = source([row('processing')]);
      const controller = new AbortController();
      const events = (await followDocument({ documentId: 'doc_1', ...doc, signal: controller.signal, pollMs: 60_000 })) as AsyncIterable<IndexingEvent>;
      const seen = collect(events);
      await nextTurn();
      expect(doc.stopped).toBe(false); // waiting for its next poll
      controller.abort();
      const ended = await Promise.race([seen.then(() => true), nextTurn().then(() => false)]);
      expect(ended).toBe(true);
      expect(await seen).toEqual([]);
      expect(doc.stopped).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
