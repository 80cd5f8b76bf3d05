/**
 * The best `k` (score, row) pairs seen, kept in a binary min-heap over typed arrays: pushing
 * is O(log k) and allocates nothing.
 */
export class TopK {
  readonly scores: Float32Array;
  readonly rows: Int32Array;
  size = 0;

  constructor(readonly k: number) {
    this.scores = new Float32Array(k);
    this.rows = new Int32Array(k);
  }

  /** The lowest score kept, or -Infinity while not full. */
  get threshold(): number {
    return this.size < this.k ? Number.NEGATIVE_INFINITY : (this.scores[0] as number);
  }

  push(score: number, row: number): void {
    const { scores, rows } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if ((scores[parent] as number) <= score) break;
        scores[i] = scores[parent] as number;
        rows[i] = rows[parent] as number;
        i = parent;
      }
      scores[i] = score;
      rows[i] = row;
      return;
    }
    if (score <= (scores[0] as number)) return;
    // Replace the root and sift down.
    let i = 0;
    const n = this.size;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && (scores[right] as number) < (scores[left] as number) ? right : left;
      if ((scores[child] as number) >= score) break;
      scores[i] = scores[child] as number;
      rows[i] = rows[child] as number;
      i = child;
    }
    scores[i] = score;
    rows[i] = row;
  }

  /** Rows and scores, best first. */
  sorted(): { row: number; score: number }[] {
    const out: { row: number; score: number }[] = [];
    for (let i = 0; i < this.size; i++) out.push({ row: this.rows[i] as number, score: this.scores[i] as number });
    return out.sort((a, b) => b.score - a.score || a.row - b.row);
  }
}
