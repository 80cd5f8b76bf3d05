import type { ResponseFormat } from '../agent/chat-model.js';
import { PlatformError } from '../errors.js';
import { jsonExceedsNesting } from '../nesting.js';

/**
 * Checks values against JSON Schemas (the tools area's `SchemaValidator` implements it: ajv on a
 * worker thread, regular expressions on RE2, a time limit per check).
 */
export interface AnswerSchemaValidator {
  /** Compiles `schema`, or throws `invalid_request` whose message starts with `what`. */
  compile(owner: string, schema: Record<string, unknown>, what: string): Promise<void>;
  /** The problems of `value` against `schema` (`args.<path> <message>`), none when it is valid. */
  check(owner: string, schema: Record<string, unknown>, value: unknown, what: string, signal?: AbortSignal): Promise<readonly string[]>;
}

const SCHEMA_PATH = 'response_format.json_schema.schema';

/** Refuses, before any model call, a schema that does not compile (400 naming it). */
export async function checkResponseSchema(format: ResponseFormat | undefined, validator: AnswerSchemaValidator, owner: string): Promise<void> {
  if (format?.type === 'json_schema') await validator.compile(owner, format.schema, SCHEMA_PATH);
}

/**
 * What the system prompt says when the model cannot be given the format natively
 * (`capabilities.structuredOutputs` false): answer JSON only, following the schema.
 */
export function formatInstruction(format: ResponseFormat): string {
  const only = 'Answer with one JSON value and nothing else: no Markdown, no code fence, no text before or after it.';
  if (format.type === 'json_object') return `${only} The value must be a JSON object.`;
  const about = format.description ? ` (${format.description})` : '';
  return `${only} It must follow this JSON Schema, named ${format.name}${about}:\n${JSON.stringify(format.schema)}`;
}

/** The failure of an answer that does not have the format: the model did not comply (`upstream_error`). */
function nonCompliant(format: ResponseFormat, problem: string, problems?: readonly string[]): PlatformError {
  const what = format.type === 'json_schema' ? `the JSON schema "${format.name}" of response_format` : 'response_format json_object';
  return new PlatformError('upstream_error', `The model's answer does not follow ${what}: ${problem}`, {
    details: { reason: 'response_format', format: format.type, ...(format.type === 'json_schema' ? { schema: format.name } : {}), ...(problems ? { problems } : {}) },
  });
}

/**
 * Checks the turn's answer against the format: JSON (an object for `json_object`), following
 * the schema for `json_schema`. Throws `upstream_error` naming the first problems when it does
 * not, so nothing of the turn is stored and the client gets a clear error.
 */
export async function checkAnswer(format: ResponseFormat, answer: string, validator: AnswerSchemaValidator, owner: string, signal?: AbortSignal): Promise<void> {
  if (jsonExceedsNesting(answer)) throw nonCompliant(format, 'it is nested too deeply to be checked');
  let value: unknown;
  try {
    value = JSON.parse(answer);
  } catch (error) {
    const start = answer.trim().slice(0, 40);
    throw nonCompliant(format, `it is not JSON (${(error as Error).message}; it starts ${JSON.stringify(start)})`);
  }
  if (format.type === 'json_object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw nonCompliant(format, `it is ${Array.isArray(value) ? 'an array' : `${value === null ? 'null' : typeof value}`}, not a JSON object`);
    return;
  }
  const problems = (await validator.check(owner, format.schema, value, 'the answer', signal)).map((p) => p.replace(/^args/, 'answer'));
  if (problems.length > 0) throw nonCompliant(format, problems.join('; '), problems);
}
