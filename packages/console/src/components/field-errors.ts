import type { ApiError } from '../api/client.js';
import { issuesOfMessage, partSentence } from './error-text.js';

/**
 * The service's 400 split onto form fields, each problem as a sentence naming its field ("Name
 * is required", see error-text.ts). The problems are the error body's `issues` (each with the
 * path of its field), else the parts of its message, which the service words `field: reason`
 * (nested fields with dots, `settings.chunkSize: ...`) joined by `; `. Some checks name the field
 * inside the sentence (`Invalid vectorstore configuration: ...`, `chunkOverlap must be smaller
 * than chunkSize`): `aliases` maps such a phrase to its field, and a field named as a word is
 * found too. A problem that names no field of the form goes to `form`, shown above the
 * buttons, so no message is ever lost.
 */
export function fieldErrors(error: ApiError | string, fields: readonly string[], aliases: Readonly<Record<string, string>> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (field: string, text: string) => {
    out[field] = out[field] ? `${out[field]}; ${text}` : text;
  };
  const issues = typeof error === 'string' ? issuesOfMessage(error) : (error.issues ?? issuesOfMessage(error.message));
  for (const issue of issues) {
    const named = [...issue.path].reverse().find((segment) => fields.includes(String(segment)));
    const worded = issue.message;
    const alias = Object.keys(aliases).find((phrase) => worded.toLowerCase().includes(phrase.toLowerCase()));
    const mentioned = fields.find((field) => new RegExp(`\\b${field}\\b`).test(worded));
    add((named !== undefined ? String(named) : undefined) ?? (alias ? (aliases[alias] as string) : undefined) ?? mentioned ?? 'form', partSentence(issue));
  }
  return out;
}
