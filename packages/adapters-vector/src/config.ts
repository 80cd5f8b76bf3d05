import { PlatformError } from '@agent-platform/core';
import { z } from 'zod';

// What the providers' `vectorStoreConfig` parsers share.

/** A string key: "<key> is required<suffix>" when it is missing, "<key> must be a string" when it is not one. */
export const requiredString = (key: string, requiredSuffix = '') => z.string({ error: (issue) => (issue.input === undefined ? `${key} is required${requiredSuffix}` : `${key} must be a string`) });

/** `value` as an http(s) URL, or undefined when it is not one. */
export function httpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The 400 for a configuration the schema refused: "Invalid vectorstore configuration: " and every problem. */
export function invalidConfiguration(error: z.ZodError): PlatformError {
  const issues = error.issues.map(({ path, code, message }) => ({ path: path.map((p) => (typeof p === 'symbol' ? String(p) : p)), code, message }));
  return PlatformError.invalid(`Invalid vectorstore configuration: ${issues.map((i) => i.message).join('; ')}`, issues);
}
