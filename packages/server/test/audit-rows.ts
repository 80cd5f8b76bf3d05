import type { AgentPlatform, AuditEventRecord } from '@agent-platform/core';
import { expect } from 'vitest';
import type { ApiRoute, RouteAudit } from '../src/route.js';

/** The methods whose routes must say whether they record an audit event. */
export const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Where the audit log stands before a call: events after it are the call's (`eventsSince`). */
export interface AuditMark {
  readonly since: Date;
  readonly seen: ReadonlySet<string>;
}

/** Every event at or after `since`, of every workspace and the server's own (storage read beside the server). */
const eventsFrom = (platform: AgentPlatform, since: Date) => platform.storage.audit.list({ from: since, limit: 1000 });

/** Marks the log now. */
export async function markAudit(platform: AgentPlatform): Promise<AuditMark> {
  const since = new Date(platform.clock.now().getTime() - 1);
  return { since, seen: new Set((await eventsFrom(platform, since)).map((e) => e.id)) };
}

/** The events written since `mark`, oldest first. */
export async function eventsSince(platform: AgentPlatform, mark: AuditMark): Promise<AuditEventRecord[]> {
  return (await eventsFrom(platform, mark.since)).filter((e) => !mark.seen.has(e.id)).reverse();
}

/** The value at a dotted path of a value. */
const at = (value: unknown, path: string): unknown => path.split('.').reduce<any>((here, key) => (here == null ? undefined : here[key]), value);

/** The id prefix of each kind of resource an event names (the local model runtime's are model names): an id from the wrong place has another. */
const ID_PREFIX: Readonly<Record<string, string>> = {
  key: 'key_',
  project: 'proj_',
  chat: 'chat_',
  stream: 'stream_',
  tool: 'tool_',
  'mcp-server': 'mcp_',
  credential: 'cred_',
  document: 'doc_',
  'knowledge-settings': 'proj_',
  approval: 'apv_',
  response: 'resp_',
};

/** The call a route got, as the audit expectation reads it. */
export interface AuditedCall {
  readonly params?: Record<string, string>;
  readonly body?: unknown;
}

/**
 * A valid call of a route that changes something left exactly one event, settled `succeeded`,
 * saying the route's resource and action, who (user and key), where (the workspace, or none for
 * the server's own) and from where (loopback), with the resource's id from where the route
 * declares it.
 */
export function expectOneEvent(route: ApiRoute, call: AuditedCall, answer: unknown, events: readonly AuditEventRecord[], who: { userId: string; keyId: string }): void {
  const audit = route.audit as RouteAudit;
  const name = `${route.method} ${route.path}`;
  expect(events, `${name}: one audit event`).toHaveLength(1);
  const [event] = events as [AuditEventRecord];
  const action = typeof audit.action === 'function' ? audit.action(call as never) : audit.action;
  expect(event, name).toMatchObject({
    resource: audit.resource,
    action,
    userId: who.userId,
    keyId: who.keyId,
    workspaceId: audit.scope === 'server' ? null : who.userId,
    outcome: 'succeeded',
    address: expect.stringMatching(/127\.0\.0\.1$/),
    userAgent: expect.any(String),
  });
  if (audit.id) {
    const [source, ...rest] = audit.id.split('.');
    const from = source === 'params' ? call.params : source === 'body' ? call.body : answer;
    const expected = at(from, rest.join('.'));
    expect(typeof expected, `${name}: ${audit.id} in the call`).toBe('string');
    expect(event.resourceId, name).toBe(expected);
    const prefix = ID_PREFIX[audit.resource];
    if (prefix) expect(event.resourceId, `${name}: the id of a ${audit.resource}`).toMatch(new RegExp(`^${prefix}`));
  } else {
    expect(event.resourceId, name).toBeNull();
  }
  for (const field of event.fields) expect(field, name).toMatch(/^[A-Za-z_][\w.-]*$/);
}
