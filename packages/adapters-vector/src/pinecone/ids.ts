import { createHash } from 'node:crypto';

/**
 * Names in Pinecone. Our namespaces become Pinecone's own namespaces and each vector's id is
 * `<documentId>#<chunkId>`, the structured ids Pinecone documents for chunks, so a document's
 * vectors are listed by the prefix `<documentId>#` and deleted by id (the way serverless indexes
 * delete by document). Pinecone takes ASCII namespaces and ids of at most 512 characters: other
 * characters are percent-encoded (so the mapping stays reversible), and a part that would still be
 * too long is replaced by `~` + its SHA-256 (a `~` is always encoded otherwise, so the two kinds
 * never meet).
 */

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Printable ASCII except `%`, `#` and `~`, which carry meaning in our names, stays as it is. */
const encode = (value: string) =>
  Array.from(new TextEncoder().encode(value), (byte) =>
    byte >= 0x20 && byte < 0x7f && byte !== 0x25 && byte !== 0x23 && byte !== 0x7e ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');

const fit = (value: string, max: number) => {
  const encoded = encode(value);
  return encoded.length <= max ? encoded : `~${sha256(value)}`;
};

/** Pinecone's name for one of our namespaces (at most 512 characters; 65 when hashed). */
export const pineconeNamespace = (namespace: string): string => fit(namespace, 512);

/** The id prefix shared by a document's vectors. */
export const documentPrefix = (documentId: string): string => `${fit(documentId, 256)}#`;

/** The Pinecone id of a chunk: `<documentId>#<chunkId>`, at most 512 characters. */
export const recordId = (documentId: string, chunkId: string): string => {
  const prefix = documentPrefix(documentId);
  return prefix + fit(chunkId, 512 - prefix.length);
};

/** Metadata stored with each vector: the real ids, whatever the Pinecone id had to encode. */
export interface ChunkMetadata {
  readonly documentId: string;
  readonly chunkId: string;
  [key: string]: string;
}
