import { z } from 'zod';

/** Every failed call answers this body (DESIGN.md, "Errors and status codes"). */
export const ErrorResponse = z
  .object({
    success: z.literal(false),
    message: z.string().describe('What went wrong, naming the offending field for invalid input'),
    code: z.string().describe('Stable machine word: invalid_request, unauthorized, not_found, ...'),
  });

export const MessageResponse = z.object({ success: z.literal(true), message: z.string() });

export const IdParam = z.object({ id: z.string().min(1).max(200) });

/** An ISO 8601 timestamp as sent on the wire. */
export const Timestamp = z.iso.datetime();

/** A non-negative integer from a query string or JSON. */
export const queryInt = () => z.coerce.number().int();
