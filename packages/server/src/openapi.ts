import type { ErrorCode } from '@agent-platform/core';
import { ErrorResponse, LocalModelErrorResponse } from '@agent-platform/core/schemas';
import { z } from 'zod';
import { STATUS_BY_CODE } from './errors.js';
import type { ApiRoute } from './route.js';

type JsonSchema = Record<string, unknown>;

/** A route the document lists beside the API routes (health, the document, the docs page). */
export interface PublicRouteDoc {
  readonly method: 'GET';
  readonly path: string;
  readonly summary: string;
  readonly response: z.ZodType | { readonly contentType: string };
  readonly params?: z.ZodObject;
  /** Failures besides the 200 (e.g. 404 for an unknown file). */
  readonly errors?: readonly ErrorCode[];
  /** The route answers 302 to this location instead of a 200 (`response` is then unused). */
  readonly redirect?: string;
}

export interface OpenApiInfo {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
  readonly license?: { readonly name: string; readonly identifier?: string; readonly url?: string };
}

/** What each documented failure status means. */
const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Invalid input; the message names the field',
  401: 'Missing or unknown API key',
  404: 'Not found (also for ids of other users)',
  409: 'Conflict with the current state',
  413: 'Body or a field over its size limit; the message names the limit',
  429: 'Too many requests of this kind waiting; try again later',
  499: 'The client went away',
  500: 'A bug of the service',
  501: 'Not configured on this server',
  502: 'An upstream (model provider, MCP server, local runtime, vector store) answered an error',
  503: 'An upstream is down or unreachable',
  504: 'An upstream did not answer in time',
};

/** Error body schemas by route kind (components). */
const ERROR_SCHEMAS = {
  ErrorResponse,
  OpenAIErrorResponse: ErrorResponse.extend({
    error: z.object({ message: z.string(), type: z.string(), code: z.string() }).describe("OpenAI's error object, so OpenAI clients show the error"),
  }),
  ResponsesErrorResponse: ErrorResponse.extend({
    error: z
      .object({ message: z.string(), type: z.string(), code: z.string(), param: z.string().nullable().describe('The field at fault, dotted (input.0.content), or null') })
      .describe('The Open Responses error object'),
  }),
  LocalModelErrorResponse,
};

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

function parameters(where: 'path' | 'query', object: z.ZodObject | undefined): JsonSchema[] {
  if (!object) return [];
  return Object.entries(object.shape).map(([name, field]) => {
    const schema = schemaOf(field as z.ZodType, 'input');
    const { description, ...rest } = schema;
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const ERROR_REF = { $ref: '#/components/schemas/ErrorResponse' };

const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });
const events = (schema: JsonSchema) => ({ content: { 'text/event-stream': { schema } } });

/** The error responses of a route: those every route may answer, and those it declares. */
function errorResponses(route: Pick<ApiRoute, 'params' | 'query' | 'body' | 'errors'>, schema: keyof typeof ERROR_SCHEMAS, authenticated: boolean) {
  const statuses = new Set<number>();
  if (route.params || route.query || route.body) statuses.add(400);
  if (authenticated) statuses.add(401);
  if (route.params) statuses.add(404);
  if (route.body) statuses.add(413);
  for (const code of route.errors ?? []) statuses.add(STATUS_BY_CODE[code]);
  return Object.fromEntries([...statuses].sort().map((status) => [status, { description: ERROR_DESCRIPTIONS[status] ?? 'Error', ...json({ $ref: `#/components/schemas/${schema}` }) }]));
}

/** `getApiV1ProjectsId` for `GET /api/v1/projects/{id}`: unique per method and path. */
const operationId = (method: string, path: string) =>
  `${method.toLowerCase()}${path
    .replace(/[{}]/g, '')
    .replace(/[/.-](\w)/g, (_, c: string) => c.toUpperCase())
    .replace(/\W/g, '')}`;

/** The success response of an API route, by its kind. */
function successResponse(route: ApiRoute) {
  switch (route.kind) {
    case 'binary':
      return {
        description: `The stored bytes as they are (ETag; If-None-Match answers 304; cached privately for ${route.media.maxAgeSeconds} s)`,
        headers: {
          ETag: { description: 'A strong validator of the bytes', schema: { type: 'string' } },
          'Cache-Control': { description: 'Only the caller may cache the bytes', schema: { type: 'string' } },
        },
        content: Object.fromEntries(route.media.types.map((type) => [type, { schema: { type: 'string', format: 'binary', contentMediaType: type } }])),
      };
    case 'sse':
    case 'replay':
      return { description: 'Server-Sent Events: a comment opens the stream, each data line is one event of this schema', ...events(schemaOf(route.response, 'output')) };
    case 'responses': {
      const body = schemaOf(route.response, 'output');
      if (!route.events) return { description: 'Success', ...json(body) };
      return {
        description: 'The response as JSON, or with stream true as Server-Sent Events (event: the type, data: the event) ending with data: [DONE]',
        content: { 'application/json': { schema: body }, 'text/event-stream': { schema: schemaOf(route.events, 'output') } },
      };
    }
    case 'openai': {
      const body = schemaOf(route.response, 'output');
      const chunk = route.events ? schemaOf(route.events, 'output') : body;
      return {
        description: 'The completion as JSON, or with stream true as Server-Sent Events of chunks ending with data: [DONE]',
        content: { 'application/json': { schema: body }, 'text/event-stream': { schema: chunk } },
      };
    }
    case 'web': {
      const body = schemaOf(route.response, 'output');
      return {
        description: 'A JSON response, or Server-Sent Events of the messages ending with the response',
        content: { 'application/json': { schema: body }, 'text/event-stream': { schema: body } },
      };
    }
    default:
      return { description: 'Success', ...json(schemaOf(route.response, 'output')) };
  }
}

/** The OpenAPI 3.1 document of the server, generated from the same zod schemas that validate. */
export function buildOpenApi(apiRoutes: readonly ApiRoute[], publicRoutes: readonly PublicRouteDoc[], info: OpenApiInfo): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, operation: unknown) => {
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[method.toLowerCase()] = operation;
  };

  for (const route of publicRoutes) {
    const content =
      'contentType' in route.response
        ? { content: { [route.response.contentType]: { schema: route.response.contentType === 'application/json' ? { type: 'object' } : { type: 'string' } } } }
        : json(schemaOf(route.response as z.ZodType, 'output'));
    add(route.path, route.method, {
      summary: route.summary,
      operationId: operationId(route.method, route.path),
      tags: ['Service'],
      security: [],
      parameters: parameters('path', route.params),
      responses: {
        ...(route.redirect
          ? { 302: { description: `Redirect to ${route.redirect}`, headers: { Location: { description: 'Where to go', schema: { type: 'string', const: route.redirect } } } } }
          : { 200: { description: 'OK', ...content } }),
        // Nothing of the route's own fails; a request the HTTP layer cannot take (a malformed
        // URL or header) is answered in the error shape all the same.
        ...(route.errors ? errorResponses(route, 'ErrorResponse', false) : { '4XX': { description: 'A malformed request', ...json(ERROR_REF) } }),
      },
    });
  }

  const tags = new Set<string>(['Service']);
  for (const route of apiRoutes) {
    tags.add(route.tag);
    const errorSchema = route.kind === 'raw' ? 'LocalModelErrorResponse' : route.kind === 'openai' ? 'OpenAIErrorResponse' : route.kind === 'responses' ? 'ResponsesErrorResponse' : 'ErrorResponse';
    const body = route.bodyDoc ?? route.body;
    add(route.path, route.method, {
      summary: route.summary,
      tags: [route.tag],
      operationId: operationId(route.method, route.path),
      parameters: [...parameters('path', route.params), ...parameters('query', route.query)],
      ...(body
        ? {
            requestBody: {
              required: true,
              content: { [route.bodyKind === 'multipart' ? 'multipart/form-data' : 'application/json']: { schema: schemaOf(body, 'input') } },
            },
          }
        : {}),
      responses: {
        [route.status ?? 200]: successResponse(route),
        ...(route.kind === 'binary' ? { 304: { description: 'Not modified: If-None-Match names these bytes' } } : {}),
        ...errorResponses(route, errorSchema, true),
        ...Object.fromEntries(Object.entries(route.protocolAnswers ?? {}).map(([status, description]) => [status, { description }])),
      },
    });
  }

  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}), ...(info.license ? { license: info.license } : {}) },
    // Relative: the document is served by the server it describes.
    servers: [{ url: '/', description: 'The server that serves this document' }],
    security: [{ bearerAuth: [] }],
    tags: [...tags].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (ap_...)' } },
      schemas: Object.fromEntries(Object.entries(ERROR_SCHEMAS).map(([name, schema]) => [name, schemaOf(schema, 'output')])),
    },
    paths,
  };
}

/** One line per tag, shown as its section's introduction. */
const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  Service: 'Health, this document and the reference page (no key needed)',
  'Access keys': "Keys of the caller's user",
  Projects: 'Projects: agents with a model, knowledge, tools and MCP servers',
  'Chat completions': 'OpenAI-compatible chat completions and models',
  Chats: 'Chats of a project, their messages and resumable streams',
  Tools: 'Code tools run in a sandbox',
  'MCP servers': 'Model Context Protocol servers of a project',
  'MCP server': "A project's agent served to MCP clients (Claude Desktop, IDEs): streamable HTTP",
  'Local models': 'The local model runtime (Ollama-compatible)',
  Credentials: 'Model provider credentials (secrets never returned)',
  Knowledge: 'Documents, files, search and retrieval settings of a project',
};
