import { createHash } from 'node:crypto';
import { PlatformError } from '@agent-platform/core';
import type { CollectionConfig, WeaviateClient } from 'weaviate-client';

/** The REST class body (`WeaviateClass`, which the package does not export by name). */
type WeaviateClass = Parameters<WeaviateClient['collections']['createFromSchema']>[0];

/**
 * The properties every object of the class carries. `namespace` and `documentId` use `field`
 * tokenization (the whole value is one token), so Equal/ContainsAny filters compare exact
 * values: with Weaviate's default `word` tokenization `proj_a:model` would also match
 * `model proj_a`.
 */
export const PROPERTIES = ['namespace', 'documentId', 'chunkId'] as const;
const FILTERED: readonly string[] = ['namespace', 'documentId'];

/**
 * The class created on first use (`POST /v1/schema`): self-provided vectors (`vectorizer: none`)
 * in an HNSW index with cosine distance, and the three text properties above (not searchable by
 * BM25: the platform's keyword search runs on its own storage).
 */
export function classDefinition(className: string): WeaviateClass {
  return {
    class: className,
    description: 'Agent Platform knowledge vectors: one object per chunk, filtered by namespace (project + embedding model)',
    vectorizer: 'none',
    vectorIndexType: 'hnsw',
    vectorIndexConfig: { distance: 'cosine' },
    properties: PROPERTIES.map((name) => ({
      name,
      dataType: ['text'],
      tokenization: 'field',
      indexFilterable: FILTERED.includes(name),
      indexSearchable: false,
    })),
  };
}

const invalid = (message: string) => PlatformError.invalid(`Invalid vectorstore configuration: ${message}`);

export const dimensionMismatch = (className: string, has: number, gives: number) => invalid(`index "${className}" has dimension ${has}, the embedding model gives ${gives}`);

/**
 * Checks that an existing class can hold the platform's vectors: its default (unnamed) vector is
 * indexed with cosine distance and the three properties are text, with exact (`field`) matching
 * where the store filters. Throws `invalid_request` naming what differs.
 */
export function verifyClass(config: CollectionConfig): void {
  const name = config.name;
  const vector = config.vectorizers.default;
  if (!vector) {
    const named = Object.keys(config.vectorizers).join(', ');
    throw invalid(`index "${name}" has only named vectors (${named}); it needs the class's default vector with cosine distance`);
  }
  const distance = (vector.indexConfig as { distance?: unknown } | undefined)?.distance;
  if (distance !== 'cosine') throw invalid(`index "${name}" uses distance ${String(distance)}, it must be cosine`);
  if (config.multiTenancy.enabled) throw invalid(`index "${name}" has multi-tenancy enabled; it must not`);
  for (const prop of PROPERTIES) {
    const found = config.properties.find((p) => p.name === prop);
    if (found?.dataType !== 'text') throw invalid(`index "${name}" is not an Agent Platform index: it needs a text property ${prop}`);
    if (FILTERED.includes(prop) && (found.tokenization !== 'field' || !found.indexFilterable)) {
      throw invalid(`index "${name}": property ${prop} must be filterable with tokenization field (it has ${found.tokenization})`);
    }
  }
}

/**
 * The object's UUID: deterministic from namespace and chunk id (Weaviate ids must be UUIDs), the
 * first 16 bytes of sha256(namespace + "\0" + chunkId) with the version (8, RFC 9562 custom) and
 * variant bits set. The chunk id itself is kept in the `chunkId` property.
 */
export function chunkUuid(namespace: string, chunkId: string): string {
  const b = createHash('sha256').update(namespace).update('\0').update(chunkId).digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The vector length Weaviate reports in a failed write, as `[has, gives]`: "new node has a vector
 * with length 16. Existing nodes have vectors with length 8" or "vector lengths don't match: 8 vs 16".
 */
export function lengthsInError(message: string): [number, number] | undefined {
  const hnsw = /vector with length (\d+)\. Existing nodes have vectors with length (\d+)/.exec(message);
  if (hnsw) return [Number(hnsw[2]), Number(hnsw[1])];
  const match = /vector lengths don't match: (\d+) vs (\d+)/.exec(message);
  if (match) return [Number(match[1]), Number(match[2])];
  return undefined;
}
