import type { ChunkEmbeddings, ChunkRecord } from '@agent-platform/core';
import { bm25Ceiling } from '@agent-platform/core/internal';
import type { Kysely, Transaction } from 'kysely';
import type { Database, Flag, Timestamp } from './database.js';

/** The database handle the repositories run on: the whole database or one transaction. */
export type Db = Kysely<Database> | Transaction<Database>;

/** What `ChunkRepository.replaceForDocument` writes: a document's new chunks and, optionally, their vectors. */
export interface ChunkWrite {
  readonly documentId: string;
  readonly chunks: readonly ChunkRecord[];
  /** One vector per chunk, in the chunks' order (checked by the caller). */
  readonly embeddings?: ChunkEmbeddings | undefined;
}

/**
 * The keyword index: BM25 over `keywordTerms` (core's analyzer) of each chunk's text, with the
 * statistics (row count, average length, document frequency) of the whole index, as SQLite's
 * FTS5 `bm25()` computes them (k1 1.2, b 0.75, idf floored at 1e-6). Entries are written with
 * their chunk rows (`StorageDialect.replaceChunks`) and leave with them (the dialect's schema
 * sees to it).
 */
export interface KeywordIndex {
  /**
   * Chunk ids of `projectId` matching any of `terms` (distinct, analyzed), best first, at most
   * `limit`; scores are BM25 over the query's ceiling (`keywordCeiling`), in 0..1.
   */
  search(db: Db, projectId: string, terms: readonly string[], limit: number): Promise<{ id: string; score: number }[]>;
}

/**
 * The most the query of `terms` can score in the keyword index (core's `bm25Ceiling`) with
 * FTS5's idf, `max(ln((N − n + 0.5) / (n + 0.5)), 1e-6)`: N chunks in the index, n of them
 * holding the term (`frequencies`). A term no chunk holds adds nothing: no chunk can match it.
 */
export const keywordCeiling = (terms: readonly string[], chunks: number, frequencies: Readonly<Record<string, number>>): number =>
  bm25Ceiling(terms.flatMap((t) => (frequencies[t] ? [Math.max(Math.log((chunks - frequencies[t] + 0.5) / (frequencies[t] + 0.5)), 1e-6)] : [])));

/**
 * What differs between the databases under the shared kysely repositories (as kysely's own
 * `DialectAdapter` does for SQL): how values are stored, how a UNIQUE violation looks, how a
 * case-insensitive LIKE is spelled, how a document's chunks are written, and the keyword index.
 * The schema itself is each dialect's own migration list, producing the same logical tables
 * (`Database`).
 */
export interface StorageDialect {
  /** A `Date` as timestamp columns store it. */
  time(date: Date): Timestamp;
  /** A boolean as flag columns store it. */
  flag(value: boolean): Flag;
  /** A JSON column's value as read back, parsed. */
  readJson(value: unknown): unknown;
  /** The case-insensitive LIKE operator (SQLite's `like` already is, for ASCII letters). */
  readonly caseInsensitiveLike: 'like' | 'ilike';
  /** A UNIQUE index's violation, not the primary key's (callers turn it into `conflict`). */
  isUniqueViolation(error: unknown): boolean;
  readonly keywords: KeywordIndex;
  /**
   * Replaces a document's chunk rows inside `tx` (a transaction): its old rows go with their
   * stored vectors and keyword index entries, the new ones come with theirs. Indexing writes
   * one document's chunks per job, so the number of statements here is part of every
   * document's cost: one call into the process on SQLite, a round trip to the server on
   * PostgreSQL.
   */
  replaceChunks(tx: Db, write: ChunkWrite): Promise<void>;
  /**
   * Whether a job claim locks the row it picks with `FOR UPDATE SKIP LOCKED` (PostgreSQL: claims
   * running together each take another job, none waits). SQLite has no row locks and needs
   * none: the claim is one UPDATE statement, and SQLite runs one writing statement at a time
   * (across processes too: the database's write lock), reading the newest data under it.
   */
  readonly skipLocked: boolean;
}

/** Reads a timestamp column (either dialect's). */
export const readTime = (value: Timestamp): Date => new Date(value);
/** Reads a flag column (either dialect's). */
export const readFlag = (value: Flag): boolean => value === true || value === 1;
