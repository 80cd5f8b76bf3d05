import { ErrorResponse } from '@agent-platform/core';
import { z } from 'zod';
import type { ApiRoute } from './routes.js';

type JsonSchema = Record<string, unknown>;

/** A route the document lists beside the API routes (health, the document, the docs page). */
export interface PublicRouteDoc {
  readonly method: 'GET';
  readonly path: string;
  readonly summary: string;
  readonly response: z.ZodType | { readonly contentType: string };
  readonly params?: z.ZodObject;
}

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

const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });

const errorResponse = (description: string) => ({ description, ...json({ $ref: '#/components/schemas/ErrorResponse' }) });

/** The OpenAPI 3.1 document of the server, generated from the same zod schemas that validate. */
export function buildOpenApi(
  apiRoutes: readonly ApiRoute[],
  publicRoutes: readonly PublicRouteDoc[],
  info: { title: string; version: string },
): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, operation: unknown) => {
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[method.toLowerCase()] = operation;
  };

  for (const route of publicRoutes) {
    const content =
      'contentType' in route.response
        ? { content: { [route.response.contentType]: {} } }
        : json(schemaOf(route.response as z.ZodType, 'output'));
    add(route.path, route.method, {
      summary: route.summary,
      tags: ['Service'],
      security: [],
      parameters: parameters('path', route.params),
      responses: { 200: { description: 'OK', ...content } },
    });
  }

  for (const route of apiRoutes) {
    add(route.path, route.method, {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[{}]/g, '').replace(/[/-](\w)/g, (_, c: string) => c.toUpperCase())}`,
      parameters: [...parameters('path', route.params), ...parameters('query', route.query)],
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { [route.bodyKind === 'multipart' ? 'multipart/form-data' : 'application/json']: { schema: schemaOf(route.body, 'input') } },
            },
          }
        : {}),
      responses: {
        [route.status ?? 200]: {
          description: route.sse ? 'Server-Sent Events; each `data:` is one event of this schema' : 'Success',
          content: { [route.sse ? 'text/event-stream' : 'application/json']: { schema: schemaOf(route.response, 'output') } },
        },
        400: errorResponse('Invalid input; the message names the field'),
        401: errorResponse('Missing or unknown API key'),
        ...(route.params ? { 404: errorResponse('Not found (also for ids of other users)') } : {}),
        ...(route.body ? { 413: errorResponse('Body over the size limit') } : {}),
      },
    });
  }

  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (ap_...)' } },
      schemas: { ErrorResponse: schemaOf(ErrorResponse, 'output') },
    },
    paths,
  };
}
