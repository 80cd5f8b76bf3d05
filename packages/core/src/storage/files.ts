/** An uploaded file: its bytes are the blob under its id. It belongs to one user. */
export interface FileRecord {
  readonly id: string;
  readonly userId: string;
  /** The project it was uploaded to; the file goes with the project. */
  readonly projectId: string;
  readonly fileName: string;
  readonly fileType: string;
  /** Bytes. */
  readonly size: number;
  readonly createdAt: Date;
}

export interface FileRepository {
  insert(file: FileRecord): Promise<void>;
  /** The file of that user, or undefined (another user's file is answered as a missing one). */
  get(userId: string, id: string): Promise<FileRecord | undefined>;
  /**
   * Deletes the file when no document of its owner refers to it any more (as `fileId` or as
   * `sourceKey`), in one step. True when it was deleted: its blob may go then.
   */
  deleteIfUnreferenced(id: string): Promise<boolean>;
}
