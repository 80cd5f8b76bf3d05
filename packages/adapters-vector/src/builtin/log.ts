import { type FileHandle, open, readFile, rename, rm, writeFile } from 'node:fs/promises';

/**
 * The on-disk form of one namespace: an append-only log of binary records.
 *   upsert: 0x01, u16 id length, id (utf-8), u16 document id length, document id, u32 dimensions, f32 × dimensions (LE)
 *   delete: 0x02, u16 id length, id
 * Replaying it rebuilds the namespace; a record cut short by a crash ends the replay and is
 * cut off. Compaction rewrites the live rows through a temp file and a rename.
 */
export type LogRecord = { readonly op: 'upsert'; readonly id: string; readonly documentId: string; readonly vector: Float32Array } | { readonly op: 'delete'; readonly id: string };

const UPSERT = 1;
const DELETE = 2;

export function encodeRecords(records: readonly LogRecord[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of records) {
    const id = Buffer.from(r.id);
    if (r.op === 'delete') {
      const head = Buffer.alloc(3);
      head.writeUInt8(DELETE, 0);
      head.writeUInt16LE(id.length, 1);
      parts.push(head, id);
    } else {
      const doc = Buffer.from(r.documentId);
      const head = Buffer.alloc(3);
      head.writeUInt8(UPSERT, 0);
      head.writeUInt16LE(id.length, 1);
      const mid = Buffer.alloc(2);
      mid.writeUInt16LE(doc.length, 0);
      const dims = Buffer.alloc(4);
      dims.writeUInt32LE(r.vector.length, 0);
      parts.push(head, id, mid, doc, dims, Buffer.from(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength));
    }
  }
  return Buffer.concat(parts);
}

/** Replays a log; answers the records and the length of the intact prefix. */
export function decodeRecords(bytes: Buffer): { records: LogRecord[]; validLength: number } {
  const records: LogRecord[] = [];
  let at = 0;
  const need = (n: number) => at + n <= bytes.length;
  while (need(3)) {
    const op = bytes.readUInt8(at);
    const idLength = bytes.readUInt16LE(at + 1);
    let p = at + 3;
    if (p + idLength > bytes.length) break;
    const id = bytes.toString('utf8', p, p + idLength);
    p += idLength;
    if (op === DELETE) {
      records.push({ op: 'delete', id });
      at = p;
      continue;
    }
    if (op !== UPSERT || p + 2 > bytes.length) break;
    const docLength = bytes.readUInt16LE(p);
    p += 2;
    if (p + docLength + 4 > bytes.length) break;
    const documentId = bytes.toString('utf8', p, p + docLength);
    p += docLength;
    const dims = bytes.readUInt32LE(p);
    p += 4;
    if (p + dims * 4 > bytes.length) break;
    // Copy into an aligned buffer (the log's bytes are not 4-byte aligned).
    const vector = new Float32Array(new Uint8Array(bytes.subarray(p, p + dims * 4)).buffer);
    p += dims * 4;
    records.push({ op: 'upsert', id, documentId, vector });
    at = p;
  }
  return { records, validLength: at };
}

export async function readLog(path: string): Promise<LogRecord[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const { records, validLength } = decodeRecords(bytes);
  if (validLength < bytes.length) {
    // A write cut short by a crash: drop the partial record so appends continue cleanly.
    const handle = await open(path, 'r+');
    await handle.truncate(validLength);
    await handle.close();
  }
  return records;
}

/**
 * Appends records to one log through a file handle kept open between appends (opening and
 * closing the file for each write cost more than the write itself during ingest). Appends must
 * not overlap (the store runs each namespace's file operations one after another). A write that
 * fails part-way is cut back off, so later records never follow a partial one.
 */
export class LogAppender {
  readonly #path: string;
  #file: { handle: FileHandle; size: number } | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  async append(records: readonly LogRecord[]): Promise<void> {
    if (!this.#file) {
      const handle = await open(this.#path, 'a');
      this.#file = { handle, size: (await handle.stat()).size };
    }
    const file = this.#file;
    const bytes = encodeRecords(records);
    try {
      for (let at = 0; at < bytes.length; ) at += (await file.handle.write(bytes, at)).bytesWritten;
      file.size += bytes.length;
    } catch (error) {
      await file.handle.truncate(file.size).catch(() => {});
      throw error;
    }
  }

  /** Closes the handle (a later append opens the file again). */
  async close(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.handle.close();
  }
}

export async function rewriteLog(path: string, records: readonly LogRecord[]): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, encodeRecords(records));
  await rename(temp, path);
}

export const removeLog = (path: string) => rm(path, { force: true });
