import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // Each provider is a subpath of its own: importing one never loads another's client.
  entry: ['src/index.ts', 'src/builtin/index.ts', 'src/qdrant/index.ts', 'src/chroma/index.ts', 'src/pinecone/index.ts', 'src/weaviate/index.ts'],
  external: ['hnswlib-node', '@qdrant/js-client-rest', 'chromadb', '@pinecone-database/pinecone', 'weaviate-client'],
});
