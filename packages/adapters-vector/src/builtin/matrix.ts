import { TopK } from './topk.js';

/** Rows per block of vectors. */
export const BLOCK_ROWS = 1024;
const BLOCK_SHIFT = 10;

/**
 * The vectors of one namespace in blocks of `BLOCK_ROWS` rows (each block one Float32Array,
 * row-major), with parallel arrays of ids and document indices. Deleting moves the last row
 * into the hole, so rows stay dense. Blocks, not one array doubled as it fills: doubling copies
 * every vector at once on the server's thread (100,000 x 384 floats is 150 MB, over half a
 * second here), a new block copies nothing.
 */
export class VectorMatrix {
  readonly blocks: Float32Array[] = [];
  ids: string[] = [];
  /** Document index of each row (into `documents`). */
  docOf: Int32Array;
  /** Stable label of each row (for the approximate index), never reused. */
  labelOf: Float64Array;
  readonly documents: string[] = [];
  readonly #documentIndex = new Map<string, number>();
  readonly #rowOf = new Map<string, number>();
  readonly rowOfLabel = new Map<number, number>();
  #nextLabel = 0;
  count = 0;

  constructor(
    readonly dimensions: number,
    capacity = BLOCK_ROWS,
  ) {
    this.docOf = new Int32Array(capacity);
    this.labelOf = new Float64Array(capacity);
  }

  /** The block of `row` and the row's offset in it, adding the block when `row` is the first of a new one. */
  #place(row: number): [Float32Array, number] {
    const b = row >> BLOCK_SHIFT;
    let block = this.blocks[b];
    if (!block) {
      block = new Float32Array(BLOCK_ROWS * this.dimensions);
      this.blocks[b] = block;
    }
    return [block, (row & (BLOCK_ROWS - 1)) * this.dimensions];
  }

  // Row metadata (4 and 8 bytes a row) still doubles: 100,000 rows copy about 1 MB.
  #grow(): void {
    const capacity = this.docOf.length * 2;
    const docOf = new Int32Array(capacity);
    docOf.set(this.docOf);
    this.docOf = docOf;
    const labelOf = new Float64Array(capacity);
    labelOf.set(this.labelOf);
    this.labelOf = labelOf;
  }

  documentIndex(documentId: string): number | undefined {
    return this.#documentIndex.get(documentId);
  }

  rowOf(id: string): number | undefined {
    return this.#rowOf.get(id);
  }

  /** Writes a vector (replacing the row of the same id); answers its row and label, and the label it replaced. */
  set(id: string, documentId: string, vector: Float32Array): { row: number; label: number; replacedLabel?: number } {
    let doc = this.#documentIndex.get(documentId);
    if (doc === undefined) {
      doc = this.documents.length;
      this.documents.push(documentId);
      this.#documentIndex.set(documentId, doc);
    }
    let row = this.#rowOf.get(id);
    let replacedLabel: number | undefined;
    if (row === undefined) {
      if (this.count === this.docOf.length) this.#grow();
      row = this.count++;
      this.ids[row] = id;
      this.#rowOf.set(id, row);
    } else {
      replacedLabel = this.labelOf[row] as number;
      this.rowOfLabel.delete(replacedLabel);
    }
    const label = this.#nextLabel++;
    const [block, offset] = this.#place(row);
    block.set(vector, offset);
    this.docOf[row] = doc;
    this.labelOf[row] = label;
    this.rowOfLabel.set(label, row);
    return replacedLabel === undefined ? { row, label } : { row, label, replacedLabel };
  }

  /** Removes a row by id; answers its label, or undefined when there was none. */
  remove(id: string): number | undefined {
    const row = this.#rowOf.get(id);
    if (row === undefined) return undefined;
    const label = this.labelOf[row] as number;
    this.rowOfLabel.delete(label);
    this.#rowOf.delete(id);
    const last = --this.count;
    if (row !== last) {
      const [to, at] = this.#place(row);
      const [from, start] = this.#place(last);
      to.set(from.subarray(start, start + this.dimensions), at);
      const movedId = this.ids[last] as string;
      this.ids[row] = movedId;
      this.docOf[row] = this.docOf[last] as number;
      this.labelOf[row] = this.labelOf[last] as number;
      this.#rowOf.set(movedId, row);
      this.rowOfLabel.set(this.labelOf[row] as number, row);
    }
    this.ids.length = last;
    if ((last & (BLOCK_ROWS - 1)) === 0) this.blocks.length = last >> BLOCK_SHIFT; // the last block emptied
    return label;
  }

  /** Ids of the rows of one document. */
  idsOfDocument(documentId: string): string[] {
    const doc = this.#documentIndex.get(documentId);
    if (doc === undefined) return [];
    const out: string[] = [];
    for (let row = 0; row < this.count; row++) if (this.docOf[row] === doc) out.push(this.ids[row] as string);
    return out;
  }

  row(row: number): Float32Array {
    const [block, offset] = this.#place(row);
    return block.slice(offset, offset + this.dimensions);
  }

  /**
   * Exact top-k by dot product: one pass over each block, no allocation per row. The
   * inner loop keeps four sums over interleaved lanes (V8 then spends less of each step on the
   * loop itself: 1.5x faster at 10,000 x 512 here, docs/BENCHMARKS.md "vectors"), and finishes
   * the dimensions that are not a multiple of 4 one by one.
   */
  search(query: Float32Array, k: number, documents?: ReadonlySet<number>): TopK {
    const top = new TopK(k);
    const { dimensions: d, docOf } = this;
    const whole = d - (d % 4);
    for (let b = 0, first = 0; first < this.count; b++, first += BLOCK_ROWS) {
      const data = this.blocks[b] as Float32Array;
      const end = Math.min(this.count, first + BLOCK_ROWS);
      for (let row = first, offset = 0; row < end; row++, offset += d) {
        if (documents && !documents.has(docOf[row] as number)) continue;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        for (let i = 0; i < whole; i += 4) {
          const o = offset + i;
          s0 += (data[o] as number) * (query[i] as number);
          s1 += (data[o + 1] as number) * (query[i + 1] as number);
          s2 += (data[o + 2] as number) * (query[i + 2] as number);
          s3 += (data[o + 3] as number) * (query[i + 3] as number);
        }
        for (let i = whole; i < d; i++) s0 += (data[offset + i] as number) * (query[i] as number);
        const sum = s0 + s1 + s2 + s3;
        if (sum > top.threshold) top.push(sum, row);
      }
    }
    return top;
  }
}
