import type { Api } from '../../api/client';
import { fillPath, messageOf } from '../../api/client';
import { sseEvents } from '../../api/sse';

/** Where one file or text is in its way into the knowledge base. */
export interface IndexingItem {
  readonly id: number;
  readonly name: string;
  /** 0-100, or null while the stage has no measure (a binary file being indexed). */
  readonly progress: number | null;
  readonly stage: string;
  readonly status: 'working' | 'completed' | 'failed';
  readonly error?: string;
  readonly documentId?: string;
}

export type Update = (patch: Partial<IndexingItem>) => void;

/** The file types the service reads as text: the console reads them and streams their indexing. */
const TEXT_TYPES = new Set(['txt', 'md', 'markdown', 'html', 'htm']);
export const ACCEPTED = '.txt,.md,.markdown,.html,.htm,.pdf,.docx';

export const extensionOf = (name: string) => /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';

/**
 * A text file's characters, decoded as the service decodes uploads: UTF-16 with a BOM, else
 * UTF-8 (BOM or not), else windows-1252.
 */
export async function readText(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

interface StreamEvent {
  type: 'progress' | 'complete' | 'error';
  progress?: number;
  message: string;
  documentId?: string;
}

/**
 * Follows an SSE answer of indexing events to its end: each stage (10 parsing ... 90 storing)
 * as it happens, then the outcome, or the service's error.
 */
async function follow(res: Response, update: Update): Promise<void> {
  for await (const event of sseEvents(res)) {
    const e = JSON.parse(event.data) as StreamEvent;
    if (e.type === 'progress') update({ progress: e.progress ?? null, stage: e.message });
    else if (e.type === 'complete') return update({ progress: 100, stage: e.message, status: 'completed', documentId: e.documentId });
    else return update({ status: 'failed', stage: 'Failed', error: e.message, documentId: e.documentId });
  }
  update({ status: 'failed', stage: 'Failed', error: 'The indexing stream ended without a result' });
}

/** Indexes text through the SSE indexing stream (`POST /api/knowledge/documents/stream`). */
export async function indexText(api: Api, projectId: string, fileName: string, content: string, update: Update): Promise<void> {
  try {
    const fileType = TEXT_TYPES.has(extensionOf(fileName)) ? extensionOf(fileName) : 'txt';
    await follow(await api.fetch('post', '/api/knowledge/documents/stream', { body: { projectId, fileName, fileType, sourceType: 'upload', content } }), update);
  } catch (error) {
    update({ status: 'failed', stage: 'Failed', error: messageOf(error) });
  }
}

interface UploadAnswer {
  files: { fileName: string; documentId: string | null; status: string; error?: string | null }[];
}

/**
 * Sends a binary file (pdf, docx) through the upload route with its byte progress, answered at
 * once (`?wait=false`), then follows the document's indexing stages through its events
 * (`GET /api/knowledge/documents/{id}/events`): the stream route takes text only.
 */
export async function indexFile(api: Api, projectId: string, file: File, update: Update): Promise<void> {
  try {
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('files', file, file.name);
    const answer = await api.upload<UploadAnswer>('/api/knowledge/upload?wait=false', form, (f) => update({ progress: Math.round(f * 100), stage: 'Uploading' }));
    const result = answer.files[0];
    if (!result) return update({ status: 'failed', stage: 'Failed', error: 'The service answered no file' });
    if (result.status === 'failed' || !result.documentId) return update({ status: 'failed', stage: 'Failed', error: result.error ?? 'Failed', documentId: result.documentId ?? undefined });
    update({ documentId: result.documentId, progress: null, stage: 'Waiting to be indexed' });
    await follow(await api.fetch('get', fillPath('/api/knowledge/documents/{id}/events', { id: result.documentId })), update);
  } catch (error) {
    update({ status: 'failed', stage: 'Failed', error: messageOf(error) });
  }
}

/** Text files go through the stream route, the others through the upload route and their events. */
export const indexAny = (api: Api, projectId: string, file: File, update: Update): Promise<void> =>
  TEXT_TYPES.has(extensionOf(file.name)) ? readText(file).then((text) => indexText(api, projectId, file.name, text, update)) : indexFile(api, projectId, file, update);
