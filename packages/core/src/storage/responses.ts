/** The states of a stored response (the Open Responses `status`). */
export type ResponseRecordStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled';

/**
 * A stored response (`POST /api/v1/responses` with `store`): the resource as last written and
 * the input items it was given. `resource` and `input` are plain JSON the responses area reads
 * back as it wrote them; the columns beside them are what queries and guards need.
 */
export interface ResponseRecord {
  /** `resp_` + letters and digits. */
  readonly id: string;
  readonly userId: string;
  /** The project whose agent answers; null for a plain model. Deleting the project deletes its responses. */
  readonly projectId: string | null;
  /** The project's chat that keeps the turn; null for a plain model. */
  readonly chatId: string | null;
  readonly previousResponseId: string | null;
  readonly status: ResponseRecordStatus;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** The response resource as JSON (its `status` is `status`). */
  readonly resource: Record<string, unknown>;
  /** The input items, each with its id, in order. */
  readonly input: readonly Record<string, unknown>[];
}

/**
 * Stored responses, scoped by owner: every read and write takes the `userId`, and another
 * user's response of the same id is not found.
 */
export interface ResponseRepository {
  /** Inserts a response; `conflict` when one of that id exists. */
  insert(record: ResponseRecord): Promise<void>;
  /** The user's response of that id, or undefined. */
  get(userId: string, id: string): Promise<ResponseRecord | undefined>;
  /**
   * Writes the response's `status`, `resource` and `updatedAt` when its status is one of
   * `from` (checked in the same statement, so of two writers racing, a finished or cancelled
   * response is never overwritten by a stale one); answers whether it was written.
   */
  update(userId: string, id: string, patch: Pick<ResponseRecord, 'status' | 'resource' | 'updatedAt'>, from: readonly ResponseRecordStatus[]): Promise<boolean>;
  /** Deletes the user's response; answers whether there was one. Responses that continued from it keep their own input and output. */
  delete(userId: string, id: string): Promise<boolean>;
}
