import type { TestServer } from './helpers.js';

/** One event of a response's stream as sent: its SSE `event:` name and its data. */
export type SentEvent = { readonly event: string; readonly type: string; readonly sequence_number: number; readonly [key: string]: any };

/** Parses an Open Responses SSE body: each event's `event:` line and `data:` JSON, checked to agree; `[DONE]` must end it. */
export function parseResponseEvents(body: string): SentEvent[] {
  const blocks = body.split('\n\n').filter((b) => b.trim() && !b.startsWith(':'));
  const last = blocks.pop();
  if (last?.trim() !== 'data: [DONE]') throw new Error(`the stream does not end with data: [DONE]: ${last}`);
  return blocks.map((block) => {
    const lines = block.split('\n').filter((l) => !l.startsWith(':'));
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
    const data = JSON.parse(lines.find((l) => l.startsWith('data: '))?.slice(6) ?? 'null');
    if (data.type !== event) throw new Error(`event: ${event} but type ${data.type}`);
    return { event, ...data };
  });
}

/** POSTs a streamed response over raw HTTP and answers its events in order. */
export async function responseEvents(s: TestServer, body: Record<string, unknown>, key = s.keyA): Promise<SentEvent[]> {
  const res = await fetch(`${s.url}/api/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) throw new Error(`not a stream: ${res.status} ${await res.text()}`);
  return parseResponseEvents(await res.text());
}
