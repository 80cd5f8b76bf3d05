/** Position of a row in a newest-first listing: (createdAt, id) descending. */
export interface ListPosition {
  readonly createdAt: Date;
  readonly id: string;
}

export interface Page<T> {
  readonly items: T[];
  /** Rows matching the filter, regardless of limit, offset and cursor. */
  readonly total: number;
  /**
   * Matching rows ahead of the first item of this page: the offset, or with `after` the number
   * of matching rows at or before that position.
   */
  readonly start: number;
}
