import { createHash } from 'node:crypto';
import type { Notifier } from '../notify/notifier.js';

/** The notifier's channel of levels set: `{ k: key, l: level }`. */
const CHANNEL = 'agent-mcp-log-level';

/** MCP's log levels, least severe first (RFC 5424's). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The level a session has not set: `info` and above are sent. */
const DEFAULT_LEVEL: LogLevel = 'info';

/** Most sessions whose level an instance keeps; past it the one set longest ago is forgotten (its calls log from `info` again). */
const MAX_SESSIONS = 10_000;

/** What names an MCP client's session: its caller, project and `Mcp-Session-Id` (undefined for a client without one). */
export interface SessionKey {
  readonly userId: string;
  readonly projectId: string;
  readonly sessionId: string | undefined;
}

const keyOf = (s: SessionKey) =>
  createHash('sha256')
    .update(JSON.stringify([s.userId, s.projectId, s.sessionId ?? null]))
    .digest('base64url');
const isLevel = (value: unknown): value is LogLevel => typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);

/**
 * The log level each MCP session set (`logging/setLevel`), on every instance: a session's
 * requests may each reach another instance, so a level set on one is published on the notifier
 * and kept by each. Kept in memory only: after a restart, or past {@link MAX_SESSIONS}, a
 * session logs from `info` until it sets a level again.
 */
export class SessionLogLevels {
  readonly #notifier: Notifier;
  readonly #levels = new Map<string, LogLevel>();
  #unsubscribe: (() => void) | undefined;

  constructor(notifier: Notifier) {
    this.#notifier = notifier;
  }

  #remember(key: string, level: LogLevel): void {
    this.#levels.delete(key);
    this.#levels.set(key, level);
    if (this.#levels.size > MAX_SESSIONS) this.#levels.delete(this.#levels.keys().next().value as string);
  }

  /** Starts hearing the levels set on other instances (from an instance's first MCP request on). */
  listen(): void {
    this.#unsubscribe ??= this.#notifier.subscribe(CHANNEL, (payload) => {
      const { k, l } = (payload ?? {}) as { k?: unknown; l?: unknown };
      if (typeof k === 'string' && isLevel(l)) this.#remember(k, l);
    });
  }

  /** Sets the session's level here at once and on the other instances through the notifier. */
  async set(session: SessionKey, level: LogLevel): Promise<void> {
    const key = keyOf(session);
    this.#remember(key, level);
    await this.#notifier.publish(CHANNEL, { k: key, l: level });
  }

  /** Whether a message of `level` goes to the session: at or above the level it set (default `info`). */
  allows(session: SessionKey, level: LogLevel): boolean {
    const floor = this.#levels.get(keyOf(session)) ?? DEFAULT_LEVEL;
    return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(floor);
  }

  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
