/**
 * Where the schema worker script is. This module sits beside it at the root of `src`, and its
 * bundled code at the root of `dist` (beside the built `schema-worker.js`), so the same relative
 * URL holds in both.
 */
export const schemaWorkerUrl = new URL('./schema-worker.js', import.meta.url);
