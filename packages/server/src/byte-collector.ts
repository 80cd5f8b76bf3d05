/**
 * One buffer of the size a request declared (`content-length`), that the bytes of its body or
 * of its file parts are copied into as they arrive. A body of many chunks is then a view of
 * it, never a join at the end: joining 9 MB of chunks is one copy of 30-50 ms on the main
 * thread of a machine with slow memory, while copying each chunk as it arrives spreads the same
 * work over the upload. The buffer is allocated on the first `append` (a body of one chunk
 * never needs it) and not zeroed (`Buffer.allocUnsafe`); the system commits its pages only as
 * bytes are written.
 */
export class ByteArena {
  readonly #capacity: number;
  #buffer: Buffer | undefined;
  #used = 0;

  /** @param capacity bytes; at most the body limit of the route (the caller checks the declared size first). */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Bytes written so far: the offset of the next `append`. */
  get used(): number {
    return this.#used;
  }

  /** Copies `chunk` in after the bytes already there; false (nothing copied) when it does not fit. */
  append(chunk: Uint8Array): boolean {
    if (this.#used + chunk.byteLength > this.#capacity) return false;
    this.#buffer ??= Buffer.allocUnsafe(this.#capacity);
    this.#buffer.set(chunk, this.#used);
    this.#used += chunk.byteLength;
    return true;
  }

  /** The bytes from `start` to `end`, as a view (no copy). */
  view(start: number, end: number): Buffer {
    return this.#buffer ? this.#buffer.subarray(start, end) : Buffer.alloc(0);
  }
}

/** A Buffer over the same memory as `bytes` (no copy). */
const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/**
 * The bytes of one stretch of a body (the whole body, or one file part), collected as they
 * arrive. One chunk is kept as it is (no copy), and so are views that continue it in the same
 * memory (the slices of one big chunk). From the next chunk on, they go into the arena
 * while they fit there in one piece; otherwise (no arena: a body without `content-length`, or
 * one that sends more than it declared) they are kept as a list joined once by `bytes()`.
 * Chunks kept as they are must not be changed by the caller afterwards.
 */
export class ByteCollector {
  readonly #arena: ByteArena | undefined;
  #size = 0;
  /** The bytes so far while they are one chunk, or views of one piece of memory: not copied anywhere. */
  #first: Uint8Array | undefined;
  /** Where the bytes start in the arena, once they are there (and only while all of them are). */
  #start: number | undefined;
  /** Every chunk so far (the arena's part first), once the bytes could not stay in the arena. */
  #chunks: Uint8Array[] | undefined;

  constructor(arena?: ByteArena) {
    this.#arena = arena;
  }

  /** Bytes collected so far. */
  get size(): number {
    return this.#size;
  }

  /** Adds `chunk`. */
  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    if (this.#size === 0) {
      this.#first = chunk;
      this.#size = chunk.byteLength;
      return;
    }
    const first = this.#first;
    if (first && first.buffer === chunk.buffer && first.byteOffset + first.byteLength === chunk.byteOffset) {
      // The next bytes of the same memory (views of one big chunk, handed on in slices): one view of both.
      this.#first = new Uint8Array(first.buffer, first.byteOffset, first.byteLength + chunk.byteLength);
      this.#size += chunk.byteLength;
      return;
    }
    const arena = this.#arena;
    if (first) {
      this.#first = undefined;
      const start = arena?.used ?? 0;
      if (arena?.append(first)) this.#start = start;
      else this.#chunks = [first];
    }
    const start = this.#start;
    if (start !== undefined && arena && arena.used === start + this.#size && arena.append(chunk)) {
      this.#size += chunk.byteLength;
      return;
    }
    if (start !== undefined && arena) {
      this.#chunks = [arena.view(start, start + this.#size)];
      this.#start = undefined;
    }
    const chunks = this.#chunks ?? [];
    chunks.push(chunk);
    this.#chunks = chunks;
    this.#size += chunk.byteLength;
  }

  /** All the bytes: the one chunk or a view of the arena (no copy), else one join of the chunks. */
  bytes(): Buffer {
    if (this.#first) return asBuffer(this.#first);
    if (this.#start !== undefined && this.#arena) return this.#arena.view(this.#start, this.#start + this.#size);
    const chunks = this.#chunks ?? [];
    return chunks.length === 1 ? asBuffer(chunks[0] as Uint8Array) : Buffer.concat(chunks, this.#size);
  }
}
