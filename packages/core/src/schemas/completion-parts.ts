import { z } from 'zod';
import { jsonExceedsNesting } from '../nesting.js';
import { sizedText } from './common.js';

/**
 * The members of the chat completion request that carry more than text: images in user
 * messages (`image_url` parts) and the answer's shape (`response_format`). docs/AGENT.md,
 * "Structured outputs" and "Images".
 */

/** Bounds of a `response_format` JSON schema, checked before anything compiles it. */
export const RESPONSE_SCHEMA_LIMITS = {
  /** Characters of the schema as JSON text, at most (64 KiB). */
  maxChars: 64 * 1024,
  /** Objects and arrays nested in the schema, at most. */
  maxDepth: 32,
} as const;

/**
 * Longest `image_url.url`, in characters: a `data:` URL of the largest image the server may be
 * set to take. The configured limits (`--max-image-bytes`) are checked on the decoded bytes.
 */
const MAX_IMAGE_URL_CHARS = 128 * 1024 * 1024;

/** The URL of an image: fetched (`https:`, `http:`) or decoded (`data:`). */
export const IMAGE_URL = z
  .string()
  .min(1)
  .max(MAX_IMAGE_URL_CHARS)
  .describe('https: (or http:) URL fetched through the outbound policy, or a data: URL (base64); PNG, JPEG, GIF or WebP, told by its bytes');

/** A member this service does not support: left out or null; any value is a 400 saying why. */
export const unsupported = (why: string) =>
  z
    .null({ error: `not supported: ${why}` })
    .optional()
    .describe(`Not supported (400 unless left out or null): ${why}`);

/** A member accepted and not used: it cannot change the answer. */
export const unused = <T extends z.ZodType>(schema: T, why: string) => schema.nullable().optional().describe(`Accepted and not used: ${why}`);

/** The message of a member the schema does not define: names it and `where` it was. */
export const unknownMember = (where: string) => ({
  error: (issue: { code?: string; keys?: string[] }) => (issue.code === 'unrecognized_keys' ? `unknown member ${(issue.keys ?? []).map((k) => `"${k}"`).join(', ')}: not part of ${where}` : undefined),
});

/** An image of a user message: an `https:`/`http:` URL the service fetches, or a `data:` URL. */
export const ImagePart = z.strictObject(
  {
    type: z.literal('image_url'),
    image_url: z.strictObject({
      url: IMAGE_URL,
      detail: z.enum(['auto', 'low', 'high']).nullable().optional().describe('Accepted and not used: the provider decides the detail'),
    }),
  },
  {
    error: (issue: { code?: string; keys?: string[] }) =>
      issue.code === 'unrecognized_keys' ? `unknown member ${(issue.keys ?? []).map((k) => `"${k}"`).join(', ')}: not part of an image_url content part` : undefined,
  },
);
export type ImagePart = z.output<typeof ImagePart>;

/** Parts no message may carry: audio and files (and images outside user messages). */
export const refusedParts = <const T extends readonly [string, ...string[]]>(types: T, why: string) =>
  z
    .object({ type: z.enum(types) })
    .superRefine((part, ctx) => {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `"${part.type}" content parts are not supported ${why}` });
    })
    .describe(`Not supported (400) ${why}`);

/** The message of a part whose `type` is missing or unknown. */
export const partError = (takes: string) => ({
  error: (issue: { input?: unknown }) => {
    const type = (issue.input as { type?: unknown } | undefined)?.type;
    return type === undefined ? `a content part needs a "type" (${takes})` : `${JSON.stringify(type)} content parts are not supported here (${takes})`;
  },
});

/** A JSON Schema the answer must follow, within `RESPONSE_SCHEMA_LIMITS`. */
export const ResponseSchema = z
  .record(z.string(), z.unknown())
  .superRefine((schema, ctx) => {
    let text: string;
    try {
      text = JSON.stringify(schema);
    } catch {
      ctx.addIssue({ code: 'custom', message: `nested deeper than ${RESPONSE_SCHEMA_LIMITS.maxDepth} levels` });
      return;
    }
    if (text.length > RESPONSE_SCHEMA_LIMITS.maxChars) ctx.addIssue({ code: 'custom', message: `larger than ${RESPONSE_SCHEMA_LIMITS.maxChars} characters of JSON` });
    else if (jsonExceedsNesting(text, RESPONSE_SCHEMA_LIMITS.maxDepth)) ctx.addIssue({ code: 'custom', message: `nested deeper than ${RESPONSE_SCHEMA_LIMITS.maxDepth} levels` });
  })
  .describe(`JSON Schema of the answer (at most ${RESPONSE_SCHEMA_LIMITS.maxChars} characters of JSON, ${RESPONSE_SCHEMA_LIMITS.maxDepth} levels deep)`);

/**
 * OpenAI's `response_format`: free text, any JSON object, or a JSON value following a schema.
 * The answer is checked before it is stored; one that does not comply fails the completion.
 */
export const ResponseFormatIn = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('text') }),
    z.strictObject({ type: z.literal('json_object') }),
    z.strictObject({
      type: z.literal('json_schema'),
      json_schema: z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, _ or -' }),
        description: sizedText(10_000).optional(),
        schema: ResponseSchema,
        strict: z.boolean().nullable().optional().describe('Ask the provider to follow the schema exactly where it can; the answer is checked against it either way'),
      }),
    }),
  ],
  { error: 'must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","json_schema":{...}}' },
);
export type ResponseFormatIn = z.output<typeof ResponseFormatIn>;
