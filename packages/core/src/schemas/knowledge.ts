import { z } from 'zod';
import { VECTOR_STORE_IDS } from '../registries/vector-stores.js';
import { offsetPaging, sizedText, Timestamp } from './common.js';

export const DEFAULT_CHUNK_SIZE = 512;
export const DEFAULT_CHUNK_OVERLAP = 64;
export const DEFAULT_TOP_K = 5;
/**
 * Hybrid weighting when neither the request nor the project sets one, measured on BEIR SciFact
 * with the built-in embedder (docs/BENCHMARKS.md, "retrieval" and "relevance floor"): the largest
 * weight that keeps the ranking (nDCG@10 0.704 through HTTP, as keyword search alone), which the
 * agent's relevance floor needs to tell related questions from unrelated ones. The spec says
 * 0.5; with this embedder 0.5 ranks below keyword search alone, so the measured value wins
 * (docs/API.md, "Deviations"). Strong embedding models do better nearer 0.5: set `alpha`.
 */
export const DEFAULT_ALPHA = 0.15;
export const DEFAULT_MMR_LAMBDA = 0.5;
/** Search type when neither the request nor the project sets one: hybrid beat semantic and keyword on SciFact. */
export const DEFAULT_SEARCH_TYPE = 'hybrid' as const;
/**
 * The agent's relevance floor when the project sets no `minScore`: hits scoring below it are
 * neither given to the model nor returned as sources. Chosen with the built-in embedder on BEIR
 * SciFact's claims and a set of everyday questions no abstract answers (`pnpm
 * bench:relevance-floor`, docs/AGENT.md "Relevance floor"): the floor that keeps sources for the
 * most claims while giving none to the most everyday questions, on the tuning halves; the same
 * floor works for every search type. Set the project's `minScore` (0 turns the floor off).
 */
export const AGENT_MIN_SCORE = 0.27;
/** Hybrid search fuses at least this many candidates from each side, whatever topK. */
export const HYBRID_CANDIDATES = 100;

export const DocumentStatus = z.enum(['pending', 'processing', 'completed', 'failed']);
export type DocumentStatus = z.output<typeof DocumentStatus>;
export const SearchType = z.enum(['semantic', 'mrr', 'hybrid']).describe('semantic: vector similarity; mrr: maximal marginal relevance (diverse); hybrid: BM25 keyword + vector');
/** The platform's own store, then the third-party ones (registries/vector-stores.ts). */
export const VectorStoreProvider = z.enum(['builtin', ...VECTOR_STORE_IDS]);

const projectId = z.string().min(1).max(200);

/** Most characters of a document's `content` (a size limit: 413 past it). */
export const MAX_DOCUMENT_CONTENT = 10_000_000;

export const CreateDocumentRequest = z.object({
  projectId,
  fileName: z.string().trim().min(1).max(255),
  fileType: z.string().trim().min(1).max(100).describe('e.g. txt, md, markdown, html, pdf, docx'),
  sourceType: z.string().trim().min(1).max(50).describe('e.g. upload, url, integration'),
  content: sizedText(MAX_DOCUMENT_CONTENT)
    .refine((s) => s.trim().length > 0, { message: 'must not be empty' })
    .describe('The text to index'),
  fileId: z.string().min(1).max(200).optional(),
});
export type CreateDocumentRequest = z.input<typeof CreateDocumentRequest>;

export const CreateDocumentResponse = z.object({
  success: z.boolean(),
  status: z.enum(['processing', 'completed', 'failed']),
  message: z.string(),
  documentId: z.string().nullable(),
});
export type CreateDocumentResponse = z.output<typeof CreateDocumentResponse>;

export const DocumentMetadata = z.record(z.string(), z.unknown()).describe('size (bytes), pages, language, ...');

export const KnowledgeDocument = z.object({
  id: z.string(),
  projectId: z.string(),
  fileId: z.string().nullable(),
  fileName: z.string(),
  fileType: z.string(),
  sourceType: z.string(),
  status: DocumentStatus,
  chunkCount: z.number().int(),
  vectorCount: z.number().int(),
  error: z.string().nullable(),
  metadata: DocumentMetadata,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type KnowledgeDocument = z.output<typeof KnowledgeDocument>;

export const KnowledgeDocumentListItem = KnowledgeDocument.pick({
  id: true,
  projectId: true,
  fileName: true,
  fileType: true,
  sourceType: true,
  status: true,
  chunkCount: true,
  // Beyond the spec's list form: the console's documents table shows it (chunks without their
  // vectors are a document that is still, or was partly, indexed).
  vectorCount: true,
  createdAt: true,
  updatedAt: true,
});

export const DocumentResponse = z.object({ success: z.literal(true), document: KnowledgeDocument });

/** One chunk of a document, as `GET /api/knowledge/chunks/{id}` answers it (what a citation's `chunkId` names). */
export const KnowledgeChunk = z.object({
  id: z.string(),
  documentId: z.string(),
  projectId: z.string(),
  index: z.number().int().describe('Position in its document, from 0'),
  content: z.string(),
  tokenCount: z.number().int(),
  metadata: z.record(z.string(), z.unknown()).describe('fileName, fileType, chunkIndex, pageNumber and pageEnd (pdf: first and last page), section'),
});
export type KnowledgeChunk = z.output<typeof KnowledgeChunk>;
export const ChunkResponse = z.object({ success: z.literal(true), chunk: KnowledgeChunk });

export const ListChunksQuery = z.object({ ...offsetPaging });
export type ListChunksQuery = z.input<typeof ListChunksQuery>;

/** A page of a document's chunks, in document order (by `index`). */
export const ListChunksResponse = z.object({
  success: z.literal(true),
  chunks: z.array(KnowledgeChunk),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int(),
});
export type ListChunksResponse = z.output<typeof ListChunksResponse>;
export type ChunkResponse = z.output<typeof ChunkResponse>;
export type DocumentResponse = z.output<typeof DocumentResponse>;

export const ListDocumentsQuery = z.object({
  projectId,
  status: DocumentStatus.optional(),
  ...offsetPaging,
});
export type ListDocumentsQuery = z.input<typeof ListDocumentsQuery>;

export const ListDocumentsResponse = z.object({
  success: z.literal(true),
  documents: z.array(KnowledgeDocumentListItem),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int(),
});
export type ListDocumentsResponse = z.output<typeof ListDocumentsResponse>;

export const SearchRequest = z.object({
  query: sizedText(10_000).refine((s) => s.trim().length > 0, { message: 'must not be empty' }),
  projectId,
  topK: z.number().int().min(1).max(100).optional().describe('Maximum results (default: the project setting, else 5)'),
  minScore: z.number().min(0).max(1).optional(),
  searchType: SearchType.optional(),
  alpha: z.number().min(0).max(1).optional().describe('hybrid weighting: 0 = pure keyword, 1 = pure semantic (default 0.15, measured)'),
  mmrLambda: z.number().min(0).max(1).optional().describe('mrr trade-off: 1 = pure relevance, 0 = maximal diversity (default 0.5)'),
});
export type SearchRequest = z.input<typeof SearchRequest>;

export const SearchHit = z.object({
  id: z.string().describe('chunk id'),
  content: z.string(),
  score: z.number().min(0).max(1),
  metadata: z.record(z.string(), z.unknown()).describe('documentId, fileName, fileType, chunkIndex, pageNumber and pageEnd (pdf: first and last page), section'),
});
export type SearchHit = z.output<typeof SearchHit>;

export const SearchResponse = z.object({ success: z.literal(true), documents: z.array(SearchHit), message: z.string() });
export type SearchResponse = z.output<typeof SearchResponse>;

const settingMembers = {
  vectorstoreProvider: VectorStoreProvider,
  vectorStoreConfig: z.record(z.string(), z.unknown()),
  embeddingModel: z.string().trim().min(1).max(200),
  chunkSize: z.number().int().min(16).max(8192),
  chunkOverlap: z.number().int().min(0).max(4096),
  searchType: SearchType,
  topK: z.number().int().min(1).max(100),
  minScore: z.number().min(0).max(1),
  alpha: z.number().min(0).max(1),
};

/** The names of the knowledge (RAG) settings, in the order answers list them. */
export const SETTING_NAMES = Object.keys(settingMembers) as (keyof typeof settingMembers)[];
export type SettingName = keyof typeof settingMembers;
export const SettingName = z.enum(SETTING_NAMES as [SettingName, ...SettingName[]]);

/** A project's settings as stored: the members it has set (absent: the default). */
export const KnowledgeSettings = z
  .object({
    vectorstoreProvider: settingMembers.vectorstoreProvider.optional(),
    vectorStoreConfig: settingMembers.vectorStoreConfig.optional(),
    embeddingModel: settingMembers.embeddingModel.optional(),
    chunkSize: settingMembers.chunkSize.optional(),
    chunkOverlap: settingMembers.chunkOverlap.optional(),
    searchType: settingMembers.searchType.optional(),
    topK: settingMembers.topK.optional(),
    minScore: settingMembers.minScore.optional(),
    alpha: settingMembers.alpha.optional(),
  })
  .strict();
export type KnowledgeSettings = z.output<typeof KnowledgeSettings>;

/**
 * A change of settings: members left out keep their value, `null` resets one to its default,
 * any other value sets it. `vectorStoreConfig` is one value (sent, it replaces the stored one).
 */
export const KnowledgeSettingsChange = z
  .object({
    vectorstoreProvider: settingMembers.vectorstoreProvider.nullable().optional(),
    vectorStoreConfig: settingMembers.vectorStoreConfig.nullable().optional(),
    embeddingModel: settingMembers.embeddingModel.nullable().optional(),
    chunkSize: settingMembers.chunkSize.nullable().optional(),
    chunkOverlap: settingMembers.chunkOverlap.nullable().optional(),
    searchType: settingMembers.searchType.nullable().optional(),
    topK: settingMembers.topK.nullable().optional(),
    minScore: settingMembers.minScore.nullable().optional(),
    alpha: settingMembers.alpha.nullable().optional(),
  })
  .strict()
  .describe('Members left out keep their value; null resets a member to its default; vectorStoreConfig is replaced as a whole');
export type KnowledgeSettingsChange = z.output<typeof KnowledgeSettingsChange>;

export const PutSettingsRequest = z.object({ projectId, settings: KnowledgeSettingsChange });
export type PutSettingsRequest = z.input<typeof PutSettingsRequest>;

export const PutSettingsResponse = z.object({
  success: z.literal(true),
  message: z.string(),
  reindex: z
    .enum(['none', 'started', 'suggested'])
    .describe(
      'started: the embedding model or the vector store changed, every document of the project is being indexed again; suggested: chunkSize or chunkOverlap changed, documents indexed before keep their chunks until re-indexed (POST /api/knowledge/reindex); none: nothing to re-index',
    ),
});
export type PutSettingsResponse = z.output<typeof PutSettingsResponse>;

export const GetSettingsQuery = z.object({ projectId });
export type GetSettingsQuery = z.input<typeof GetSettingsQuery>;

/** Every setting's value in effect: the project's, else the default. */
export const EffectiveKnowledgeSettings = z.object({
  vectorstoreProvider: VectorStoreProvider.describe("builtin: the server's default store (the built-in one, or the store the operator set with --vector-store)"),
  vectorStoreConfig: settingMembers.vectorStoreConfig
    .nullable()
    .describe('null: none. Secrets (apiKey) are redacted: "****" and at most their last four characters; send one back unchanged to keep it'),
  embeddingModel: z.string().describe('builtin: the built-in model'),
  chunkSize: z.number().int(),
  chunkOverlap: z.number().int(),
  searchType: SearchType,
  topK: z.number().int(),
  minScore: z.number().nullable().describe('null: not set; search keeps every hit and the agent drops hits below its relevance floor'),
  alpha: z.number(),
});
export type EffectiveKnowledgeSettings = z.output<typeof EffectiveKnowledgeSettings>;

export const KnowledgeSettingsResponse = z.object({
  success: z.literal(true),
  settings: EffectiveKnowledgeSettings,
  defaults: z.array(SettingName).describe('The settings the project has not set, whose value above is the default'),
});
export type KnowledgeSettingsResponse = z.output<typeof KnowledgeSettingsResponse>;

/** Most documents one re-index request names. */
export const MAX_REINDEX_DOCUMENTS = 1000;

export const ReindexRequest = z
  .object({
    projectId,
    documentIds: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(MAX_REINDEX_DOCUMENTS)
      .optional()
      .describe(`Documents of the project to re-index (at most ${MAX_REINDEX_DOCUMENTS}); absent: every document of the project`),
  })
  .strict();
export type ReindexRequest = z.input<typeof ReindexRequest>;

export const ReindexResponse = z.object({
  success: z.literal(true),
  message: z.string(),
  queued: z.number().int().describe('Documents queued for indexing again'),
  documentIds: z.array(z.string()).describe('The documents queued, each now pending; follow each with GET /api/knowledge/documents/{id}/events'),
});
export type ReindexResponse = z.output<typeof ReindexResponse>;

/** An uploaded file as the server hands it over (from a multipart form). */
export const UploadedFile = z.object({
  name: z.string().trim().min(1).max(255),
  type: z.string().max(200),
  bytes: z.instanceof(Uint8Array),
});

export const UploadRequest = z.object({
  projectId,
  files: z.array(UploadedFile).min(1, 'at least one file is required').max(50),
});
export type UploadRequest = z.input<typeof UploadRequest>;

export const UploadQuery = z.object({
  wait: z
    .enum(['true', 'false'])
    .default('true')
    .describe(
      'false: answer as soon as the files are stored, before indexing (status processing), and follow each document with GET /api/knowledge/documents/{id}/events. Default true: wait up to 5 s for indexing',
    ),
});

export const UploadResponse = z.object({
  success: z.boolean(),
  message: z.string(),
  files: z.array(
    z.object({
      fileId: z.string().nullable(),
      fileName: z.string(),
      fileType: z.string(),
      size: z.number().int(),
      documentId: z.string().nullable(),
      status: z.enum(['processing', 'completed', 'failed']),
      error: z.string().nullable(),
    }),
  ),
});
export type UploadResponse = z.output<typeof UploadResponse>;

/** The multipart form of `POST /api/knowledge/upload`, for the API document. */
export const UploadForm = z.object({
  projectId,
  files: z.array(z.string().meta({ format: 'binary' })).describe('One or more files (txt, md, html, pdf, docx)'),
});
