import { describe, expect, it } from 'vitest';
import { ApiError, messageOf } from '../src/api/client.js';
import { issueSentence, labelOf } from '../src/components/error-text.js';
import { fieldErrors } from '../src/components/field-errors.js';

const issue = (path: (string | number)[], message: string, code = 'custom') => ({ path, code, message });
/** A 400 as the service answers it: the message, and the same problems as `details.issues`. */
const invalid = (issues: { path: (string | number)[]; code: string; message: string }[]) =>
  new ApiError(400, issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '), 'invalid_request', { details: { issues } });

describe("the console's wording of the service's validation errors", () => {
  it('names the field and says the problem as a sentence, for every zod reason the service answers', () => {
    const cases: [string[] | (string | number)[], string, string][] = [
      [['name'], 'Too small: expected string to have >=1 characters', 'Name is required'],
      [['name'], 'Invalid input: expected string, received undefined', 'Name is required'],
      [['name'], 'Invalid input: expected string, received number', 'Name must be text'],
      [['name'], 'Too big: expected string to have <=200 characters', 'Name must have at most 200 characters'],
      [['topK'], 'Too big: expected number to be <=100', 'Top K must be 100 or less'],
      [['minScore'], 'Too small: expected number to be >=0', 'Minimum score must be 0 or more'],
      [['limit'], 'Invalid input: expected int, received number', 'Limit must be a whole number'],
      [['alpha'], 'Too big: expected number to be <1', 'Alpha must be less than 1'],
      [['searchType'], 'Invalid option: expected one of "semantic"|"mrr"|"hybrid"', 'Search type must be one of semantic, mrr or hybrid'],
      [['baseUrl'], 'Invalid URL', 'Base URL must be a valid URL'],
      [['apiKey'], 'Too small: expected string to have >=8 characters', 'API key must have at least 8 characters'],
      [['dependencies', 2], 'Too big: expected string to have <=214 characters', 'Dependencies, item 3 must have at most 214 characters'],
      [['settings', 'chunkSize'], 'Too small: expected number to be >=50', 'Chunk size must be 50 or more'],
      [[], 'Unrecognized key: "projectId"', 'The request has a field the service does not know: "projectId"'],
      [['content'], 'larger than the limit of 10000 characters', 'Content must have at most 10000 characters'],
      [['baseUrl'], 'must be an http or https URL', 'Base URL must be an http or https URL'],
      [['url'], 'required when transport is http', 'URL is required when transport is http'],
      [['instructions'], 'at most 32000 characters', 'Instructions must have at most 32000 characters'],
      [['settings', 'vectorStoreConfig'], 'endpoint: Invalid URL', 'Vector store configuration: endpoint: Invalid URL'],
      [['parameters'], 'not a valid JSON Schema: unknown type', 'Parameters is not a valid JSON Schema: unknown type'],
      [['query'], 'something else entirely', 'Query: something else entirely'],
    ];
    for (const [path, message, sentence] of cases) expect(issueSentence(issue(path, message))).toBe(sentence);
    expect([labelOf('projectId'), labelOf('vectorStoreConfig'), labelOf('mcp_server')]).toEqual(['Project ID', 'Vector store configuration', 'MCP server']);
  });

  it('puts each sentence at its field from the issues of the body, and what names no field of the form above the buttons', () => {
    const error = invalid([
      issue(['name'], 'Too small: expected string to have >=1 characters', 'too_small'),
      issue(['settings', 'topK'], 'Too big: expected number to be <=100', 'too_big'),
      issue([], 'Unrecognized key: "x"', 'unrecognized_keys'),
    ]);
    expect(fieldErrors(error, ['name', 'topK'])).toEqual({ name: 'Name is required', topK: 'Top K must be 100 or less', form: 'The request has a field the service does not know: "x"' });
    expect(messageOf(error)).toBe('Name is required; Top K must be 100 or less; The request has a field the service does not know: "x"');
    // The issues, not the message, say where: a path the message could not carry (a key with a dot) still finds its field.
    const dotted = new ApiError(400, 'settings.a.b: Invalid input', 'invalid_request', { details: { issues: [issue(['settings', 'a.b'], 'Invalid input', 'invalid_type')] } });
    expect(fieldErrors(dotted, ['a.b'])).toEqual({ 'a.b': 'A.b is not valid' });
  });

  it('reads the message when the body has no issues: `field: reason` parts, ajv problems of tool arguments, and messages of its own', () => {
    expect(fieldErrors('color: Too big: expected string to have <=50 characters; baseUrl: must be an http or https URL', ['color', 'baseUrl'])).toEqual({
      color: 'Colour must have at most 50 characters',
      baseUrl: 'Base URL must be an http or https URL',
    });
    expect(fieldErrors('Invalid vectorstore configuration: endpoint: Invalid URL', ['vectorStoreConfig'], { 'Invalid vectorstore configuration': 'vectorStoreConfig' })).toEqual({
      vectorStoreConfig: 'Invalid vectorstore configuration: endpoint: Invalid URL',
    });
    const args = new ApiError(
      400,
      "Invalid arguments for tool weather: args must have required property 'city'; args.days must be integer; args must NOT have additional properties",
      'invalid_request',
    );
    expect(messageOf(args)).toBe('Invalid arguments for tool weather: city is required; days must be a whole number; The arguments have a member the schema does not allow');
    // Not invalid input: the service's message as it is.
    expect(messageOf(new ApiError(404, 'Project proj_1 not found', 'not_found'))).toBe('Project proj_1 not found');
    expect(messageOf(new ApiError(502, 'upstream: connection reset', 'upstream_error'))).toBe('upstream: connection reset');
  });
});
