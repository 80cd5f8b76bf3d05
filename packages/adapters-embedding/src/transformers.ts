/** The `./transformers` entry: local transformers.js models, from a folder or the Hugging Face hub. */

export { downloadHubModel, hubModelFolder, isHubModelCached, type TransformersHubOptions, transformersHubEmbedder } from './hub.js';
export {
  readModelFolder,
  type TransformersEmbedderOptions,
  type TransformersEmbeddingModel,
  type TransformersModelInfo,
  type TransformersPooling,
  transformersEmbedder,
} from './transformers-model.js';
