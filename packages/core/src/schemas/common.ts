import { z } from 'zod';

/** Every failed call answers this body (DESIGN.md, "Errors and status codes"). */
export const ErrorResponse = z.object({
  success: z.literal(false),
  message: z.string().describe('What went wrong, naming the offending field for invalid input'),
  code: z.string().describe('Stable machine word: invalid_request, unauthorized, not_found, ...'),
  details: z
    .object({
      issues: z
        .array(
          z.object({
            path: z.array(z.union([z.string(), z.number()])).describe('Where the problem is: ["name"], ["settings", "topK"]; [] for the whole body'),
            code: z.string().describe("zod's issue code: invalid_type, too_small, too_big, invalid_value, unrecognized_keys, custom, ..."),
            message: z.string(),
          }),
        )
        .optional()
        .describe('Invalid input (400, 413 past a size limit): each problem with the path of its field, as `message` words them'),
    })
    .catchall(z.unknown())
    .optional()
    .describe('Extra facts of some errors, e.g. the issues of invalid input, line and column of tool code that does not parse, limit and max of a document over a limit'),
});

export const MessageResponse = z.object({ success: z.literal(true), message: z.string() });

export const IdParam = z.object({ id: z.string().min(1).max(200) });

/** An ISO 8601 timestamp as sent on the wire. */
export const Timestamp = z.iso.datetime();

/** A non-negative integer from a query string or JSON. */
export const queryInt = () => z.coerce.number().int();

/** Largest `limit` of every list, and its default (the spec's page size). */
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_LIST_LIMIT = 20;

/** `limit` (1-100, default 20) and `offset` (default 0) of the offset-paged lists. */
export const offsetPaging = {
  limit: queryInt().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  offset: queryInt().min(0).max(1_000_000_000).default(0),
};

/**
 * A string of at most `max` characters whose length is a size limit, not a matter of form:
 * past it `parseInput` answers `payload_too_large` (413), like a body past the server's byte
 * limit, with the limit in the message (`content: larger than the limit of 10000000
 * characters`). The document shows it as `maxLength`.
 */
export function sizedText(max: number) {
  return z
    .string()
    .check((ctx) => {
      if (ctx.value.length > max) {
        ctx.issues.push({ code: 'custom', message: `larger than the limit of ${max} characters`, input: ctx.value, params: { sizeLimit: max } });
      }
    })
    .meta({ maxLength: max });
}
