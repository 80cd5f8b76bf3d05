import { createPacer } from '@agent-platform/core/internal';
import hnswlib from 'hnswlib-node';
import type { VectorMatrix } from './matrix.js';

export interface HnswOptions {
  /** Graph degree. Default 16. */
  readonly m?: number;
  /** Candidate list while building. Default 200. */
  readonly efConstruction?: number;
  /** Candidate list while searching, at least topK. Default 256. */
  readonly efSearch?: number;
}

/**
 * An approximate index (HNSW, hnswlib via hnswlib-node) over a matrix's rows, by their stable
 * labels. Built in slices that yield to the event loop, so a large namespace does not block
 * the server; until it is `ready`, searches use the exact scan. A deleted or replaced row is
 * marked deleted and its slot is reused by the next insertion, so re-indexing documents does
 * not grow the index.
 */
export class HnswIndex {
  readonly #index: hnswlib.HierarchicalNSW;
  readonly #efSearch: number;
  ready = false;
  #building: Promise<void> | undefined;
  #tracking = false;
  #stopped = false;
  /** Slots marked deleted, to be reused by the next insertions. */
  #deleted = 0;

  constructor(
    readonly matrix: VectorMatrix,
    readonly options: HnswOptions = {},
  ) {
    this.#index = new hnswlib.HierarchicalNSW('ip', matrix.dimensions);
    this.#index.initIndex({
      maxElements: Math.max(1024, matrix.count * 2),
      m: options.m ?? 16,
      efConstruction: options.efConstruction ?? 200,
      allowReplaceDeleted: true,
    });
    this.#efSearch = options.efSearch ?? 256;
  }

  /** Slots in the index, live and deleted. */
  get slots(): number {
    return this.#index.getCurrentCount();
  }

  #ensureCapacity(extra: number): void {
    const needed = this.#index.getCurrentCount() - this.#deleted + extra;
    if (needed > this.#index.getMaxElements()) this.#index.resizeIndex(Math.max(needed, this.#index.getMaxElements() * 2));
  }

  /**
   * Adds every current row, a slice at a time. Rows written meanwhile go in directly (see
   * `added`), so the index is complete when the build ends.
   */
  build(): Promise<void> {
    this.#building ??= (async () => {
      this.#tracking = true;
      const labels = Array.from(this.matrix.labelOf.subarray(0, this.matrix.count));
      // A slice of main-thread time at a time, not a count of rows: an insertion costs more as the
      // graph grows and on a busy machine (500 rows at once held the event loop 200+ ms).
      const pace = createPacer(10);
      for (const label of labels) {
        if (this.#stopped) return;
        const row = this.matrix.rowOfLabel.get(label);
        if (row !== undefined) {
          // Per row: rows written meanwhile (`added`) take slots too.
          this.#ensureCapacity(1);
          this.#add(row);
        }
        await pace();
      }
      this.ready = true;
    })();
    return this.#building;
  }

  /** Ends a build in progress and stops tracking writes (the namespace was dropped or closed). */
  stop(): void {
    this.#stopped = true;
    this.#tracking = false;
  }

  #add(row: number): void {
    this.#index.addPoint(Array.from(this.matrix.row(row)), this.matrix.labelOf[row] as number, this.#deleted > 0);
    if (this.#deleted > 0) this.#deleted--;
  }

  /** Keeps the index in step with a row written to the matrix. */
  added(row: number): void {
    if (!this.#tracking) return;
    this.#ensureCapacity(1);
    this.#add(row);
  }

  removed(label: number): void {
    try {
      this.#index.markDelete(label);
      this.#deleted++;
    } catch {
      // Not in the index yet (a build slice had not reached it).
    }
  }

  /** Labels and similarities of the nearest rows, best first. */
  search(query: Float32Array, k: number): { label: number; score: number }[] {
    const live = this.#index.getCurrentCount() - this.#deleted;
    if (live <= 0) return [];
    this.#index.setEf(Math.max(this.#efSearch, k));
    const { neighbors, distances } = this.#index.searchKnn(Array.from(query), Math.min(k, live));
    // hnswlib's inner-product distance is 1 - dot.
    return neighbors.map((label, i) => ({ label, score: 1 - (distances[i] as number) }));
  }
}
