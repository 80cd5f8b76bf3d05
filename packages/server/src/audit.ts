import type { AgentPlatform } from '@agent-platform/core';
import { getRequestIP, type H3Event } from 'h3';
import type { ApiRoute, RouteAudit, RouteInput } from './route.js';

/** A field name an event may keep: a schema's member name, never a value. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

/** The audit declaration of a route that records events; undefined for GET routes and those that say why not. */
export const auditOf = (route: ApiRoute): RouteAudit | undefined => (route.audit && 'resource' in route.audit ? (route.audit as RouteAudit) : undefined);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at a dotted path (`project.id`) of a value; undefined where the path leads nowhere. */
function at(value: unknown, path: string): unknown {
  let here = value;
  for (const key of path.split('.')) {
    if (!isObject(here) || !Object.hasOwn(here, key)) return undefined;
    here = here[key];
  }
  return here;
}

/** A path id or a member of the request's body, as a string; undefined for `result.` paths (known after) or where there is none. */
function requestId(audit: RouteAudit, input: RouteInput): string | undefined {
  const [source, ...rest] = (audit.id ?? '').split('.');
  const value = source === 'params' ? at(input.params, rest.join('.')) : source === 'body' ? at(input.body, rest.join('.')) : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The names of the fields a request sets (`RouteAudit.fields`): the keys the client sent of the
 * declared object of its body that its schema kept (an unknown key, stripped, is no field),
 * never their values.
 */
function fieldNames(audit: RouteAudit, raw: unknown, body: unknown): string[] {
  if (Array.isArray(audit.fields)) return [...audit.fields];
  const path = typeof audit.fields === 'string' ? audit.fields.slice('body.'.length) : undefined;
  const sent = path ? at(raw, path) : raw;
  const kept = path ? at(body, path) : body;
  if (!isObject(sent) || !isObject(kept)) return [];
  return Object.keys(sent).filter((key) => FIELD_NAME.test(key) && Object.hasOwn(kept, key) && kept[key] !== undefined);
}

/** The JSON body a handler answered (`openai` and `responses` routes wrap it), or undefined for a stream. */
function answerBody(route: ApiRoute, result: unknown): unknown {
  if (route.kind !== 'openai' && route.kind !== 'responses') return result;
  const wrapped = result as { stream: boolean; body?: unknown };
  return wrapped.stream ? undefined : wrapped.body;
}

/** What `begin` answers: settles the event once the route answered. */
export interface AuditTicket {
  /** The handler returned `result` (the route answers success). */
  succeeded(result: unknown): Promise<void>;
  /** The handler failed: nothing was changed. */
  failed(): Promise<void>;
}

/**
 * Writes the audit event of a call to a route that changes something, before its handler runs
 * (outcome `pending`), and settles it after (`AuditTicket`): a process killed in between leaves
 * a pending event, never a change without one. A failed write refuses the call (its change is
 * not made). `raw` is the body as the client sent it, before the schema parsed it.
 */
export async function beginAudit(platform: AgentPlatform, audit: RouteAudit, route: ApiRoute, input: RouteInput, raw: unknown, event: H3Event): Promise<AuditTicket> {
  const id = await platform.audit.begin(input.caller, {
    action: typeof audit.action === 'function' ? audit.action(input) : audit.action,
    resource: audit.resource,
    resourceId: requestId(audit, input),
    fields: fieldNames(audit, raw, input.body),
    ...(audit.scope === 'server' ? { workspaceId: null } : {}),
    // The peer of the connection: no proxy's X-Forwarded-For is trusted (a client could write it).
    address: getRequestIP(event),
    userAgent: event.req.headers.get('user-agent') ?? undefined,
  });
  return {
    async succeeded(result) {
      const created = audit.id?.startsWith('result.') ? at(answerBody(route, result), audit.id.slice('result.'.length)) : undefined;
      await platform.audit.settle(id, 'succeeded', typeof created === 'string' ? created : undefined);
    },
    failed: () => platform.audit.settle(id, 'failed'),
  };
}
