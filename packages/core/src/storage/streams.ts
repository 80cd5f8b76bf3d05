/**
 * A chat stream's row (`StreamRepository`). `createdAt` is a `Date`; `leaseUntil`, like every
 * time the repository takes (`now`, `expiresAt`), is ms since the epoch.
 */
export interface StreamRow {
  readonly id: string;
  readonly chatId: string;
  readonly userId: string;
  readonly createdAt: Date;
  /** `unwritten` (no completion yet), `writing` (one completion holds it), `ended`. */
  readonly state: 'unwritten' | 'writing' | 'ended';
  /** Events written so far: the id of the last one. */
  readonly length: number;
  /** While `writing`: when the writer's lease runs out (ms since the epoch); null otherwise. */
  readonly leaseUntil: number | null;
}

/**
 * Chat streams and their events in the database, for `storageStreamStore` (core): streams every
 * instance reaches. Expiry times are given by the caller (ms since the epoch); a stream being
 * written has none.
 */
export interface StreamRepository {
  /** Inserts an `unwritten` stream expiring at `expiresAt`, unless its user has `maxOpen` streams not `ended`: false then. */
  create(stream: { id: string; chatId: string; userId: string; createdAt: Date }, options: { maxOpen: number; expiresAt: number; now: number }): Promise<boolean>;
  /** The stream of that user and chat, unless expired at `now`. */
  get(userId: string, chatId: string, id: string, now: number): Promise<StreamRow | undefined>;
  /**
   * Makes `writer` the stream's one writer, its lease running until `leaseUntil`: `conflict`
   * while another writes it (even past its lease: `endLapsed` first).
   */
  claim(userId: string, chatId: string, id: string, writer: string, now: number, leaseUntil: number): Promise<'claimed' | 'conflict' | 'not_found'>;
  /**
   * Appends the next event (JSON) when `writer` still holds the stream, extending its lease to
   * `leaseUntil`; answers its id, or undefined (the stream was ended, e.g. its lease ran out and
   * another instance ended it: fenced, nothing is written).
   */
  append(id: string, writer: string, event: unknown, leaseUntil: number): Promise<number | undefined>;
  /** Extends the lease of `writer` to `leaseUntil` while it holds the stream; false when it no longer does. */
  heartbeat(id: string, writer: string, leaseUntil: number): Promise<boolean>;
  /** Ends the stream `writer` holds, expiring at `expiresAt`. */
  end(id: string, writer: string, expiresAt: number): Promise<void>;
  /**
   * Ends the streams being written whose writer's lease ran out at `now` (the one `id`, or all):
   * appends `event` as each one's last event and makes it `ended`, expiring at `expiresAt`.
   * Guarded like `append` (one UPDATE checks the state and the lease), so each lapsed stream is
   * ended once, by whichever caller gets there first, whatever runs concurrently. Answers the
   * ids it ended.
   */
  endLapsed(options: { readonly now: number; readonly expiresAt: number; readonly event: unknown; readonly id?: string }): Promise<string[]>;
  /**
   * Up to `limit` events after `afterId`, with the stream's row; an ended stream's expiry moves
   * to `touchExpiresAt` (a read keeps it). Undefined when the stream is gone or expired at `now`.
   */
  read(id: string, afterId: number, limit: number, now: number, touchExpiresAt: number): Promise<{ row: StreamRow; events: { id: number; event: unknown }[] } | undefined>;
  /** Deletes the streams (and events) expired at `now`. */
  sweep(now: number): Promise<void>;
}
