/** One Server-Sent Event: its `id:` (when sent) and its `data:` lines joined. */
export interface SseEvent {
  readonly id: string | undefined;
  readonly data: string;
}

/**
 * The events of an SSE answer as they arrive. Comment lines (`: ok`, `: keep-alive`) are
 * skipped; an event ends at a blank line. Ends when the body ends; stops reading when `signal`
 * aborts (the caller's abort also aborts the fetch).
 */
export async function* sseEvents(res: Response, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let id: string | undefined;
  let data: string[] = [];
  try {
    while (!signal?.aborted) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.search(/\r?\n/);
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === '\r' ? end + 2 : end + 1);
        if (line === '') {
          if (data.length > 0) yield { id, data: data.join('\n') };
          data = [];
          id = undefined;
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') data.push(value);
          else if (field === 'id') id = value;
        }
        end = buffer.search(/\r?\n/);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
