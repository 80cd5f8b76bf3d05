/**
 * The kinds of embedding model a project's `embeddingModel` can name, declared once: besides
 * `builtin` (the default), each is `<kind>:<value>`. The server's embedder factories
 * (`satisfies Record<EmbedderKind, …>`) and its message for an unknown name come from this
 * table. Entries are data: the adapters live in `@agent-platform/adapters-embedding`, the
 * factories in the server.
 */
export interface EmbedderEntry {
  /** What follows `<kind>:`, as the messages show it, e.g. `<model>`. */
  readonly value: string;
}

export const EMBEDDERS = {
  /** An OpenAI-compatible embeddings server. */
  openai: { value: '<model>' },
  /** An ONNX sentence-embedding model folder the operator put in the data folder's `models/`. */
  local: { value: '<folder>' },
  /** A Hugging Face hub model kept in the data folder's `models/hub/`. */
  hf: { value: '<owner>/<name>' },
} as const satisfies Record<string, EmbedderEntry>;

/** An embedder kind, the prefix of `<kind>:<value>` names, e.g. `openai`. */
export type EmbedderKind = keyof typeof EMBEDDERS;

/** Every kind, in the table's order. */
export const EMBEDDER_KINDS = Object.keys(EMBEDDERS) as EmbedderKind[];

/** The names a project's `embeddingModel` may take, as messages list them: `"builtin", "openai:<model>", … or "hf:<owner>/<name>"`. */
export const EMBEDDER_FORMS: string = (() => {
  const forms = ['builtin', ...EMBEDDER_KINDS.map((kind) => `${kind}:${EMBEDDERS[kind].value}`)].map((form) => `"${form}"`);
  return `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}`;
})();

const NAME = new RegExp(`^(${EMBEDDER_KINDS.join('|')}):(.+)$`);

/** `<kind>:<value>` split (a value of one line), or undefined when `name` is not of that form with a kind of the table. */
export function splitEmbedderName(name: string): { kind: EmbedderKind; value: string } | undefined {
  const [, kind, value] = NAME.exec(name) ?? [];
  return kind && value ? { kind: kind as EmbedderKind, value } : undefined;
}
