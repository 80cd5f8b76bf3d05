import { afterEach, describe, expect, it } from 'vitest';
import { isPlatformError } from '../errors.js';
import { MAX_NOTIFICATION_BYTES, type NotificationPayload, type Notifier } from '../notify/notifier.js';

export interface NotifierSuiteOptions {
  /** A new notifier. With `shared`, each call gives another instance's notifier on the same medium. */
  create(): Promise<Notifier>;
  /** True when notifiers made by `create` hear one another (they are instances of one deployment). */
  readonly shared?: boolean;
}

/** Resolves with the first `count` payloads the notifier delivers on `channel` (rejects after 10 s). */
export function nextPayloads(notifier: Notifier, channel: string, count = 1): Promise<NotificationPayload[]> {
  return new Promise((resolve, reject) => {
    const got: NotificationPayload[] = [];
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`heard ${got.length} of ${count} notifications on ${channel}`));
    }, 10_000);
    const stop = notifier.subscribe(channel, (payload) => {
      got.push(payload);
      if (got.length < count) return;
      clearTimeout(timer);
      stop();
      resolve(got);
    });
  });
}

/** The behaviour every `Notifier` must have. */
export function describeNotifier(name: string, options: NotifierSuiteOptions): void {
  describe(`Notifier conformance: ${name}`, () => {
    const open: Notifier[] = [];
    const create = async () => {
      const n = await options.create();
      open.push(n);
      return n;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((n) => n.close()));
    });

    it('delivers to the subscribers of the channel, in order, never inside publish', async () => {
      const n = await create();
      const other: NotificationPayload[] = [];
      n.subscribe('other', (p) => other.push(p));
      const heard = nextPayloads(n, 'documents', 3);
      // A handler that publishes or takes locks must not run inside its publisher's call.
      let publishing = false;
      let inside = 0;
      let calls = 0;
      const stop = n.subscribe('documents', () => {
        calls++;
        if (publishing) inside++;
      });
      for (const payload of [{ id: 'doc_1', step: 10 }, { id: 'doc_1', step: 60 }, ['doc_2', null, true, 'é']] as NotificationPayload[]) {
        publishing = true;
        const sent = n.publish('documents', payload);
        publishing = false;
        await sent;
      }
      expect(await heard).toEqual([{ id: 'doc_1', step: 10 }, { id: 'doc_1', step: 60 }, ['doc_2', null, true, 'é']]);
      expect(inside).toBe(0);
      stop();
      const after = nextPayloads(n, 'documents');
      await n.publish('documents', 'after');
      expect(await after).toEqual(['after']);
      expect(calls).toBe(3); // unsubscribed before 'after'
      expect(other).toEqual([]);
    });

    it('refuses a message over the size limit, naming it, and still delivers the next', async () => {
      const n = await create();
      const error = await n.publish('documents', 'x'.repeat(MAX_NOTIFICATION_BYTES)).catch((e: unknown) => e);
      expect(isPlatformError(error) && error.code).toBe('invalid_request');
      expect((error as Error).message).toContain('send ids, not documents');
      const heard = nextPayloads(n, 'documents');
      await n.publish('documents', 'y'.repeat(MAX_NOTIFICATION_BYTES - 100));
      expect(await heard).toEqual(['y'.repeat(MAX_NOTIFICATION_BYTES - 100)]);
    });

    it('keeps delivering to the others when one handler throws', async () => {
      const n = await create();
      n.subscribe('documents', () => {
        throw new Error('handler bug');
      });
      const heard = nextPayloads(n, 'documents');
      await n.publish('documents', 1);
      expect(await heard).toEqual([1]);
    });

    it('refuses to publish once closed; close is idempotent', async () => {
      const n = await create();
      await n.close();
      await n.close();
      const error = await n.publish('documents', 1).catch((e: unknown) => e);
      expect(isPlatformError(error) && error.code).toBe('unavailable');
    });

    it.runIf(options.shared)('delivers across instances: each hears what any of them published', async () => {
      const [a, b, c] = [await create(), await create(), await create()];
      const heard = [a, b, c].map((n) => nextPayloads(n, 'settings', 2));
      await a.publish('settings', { projectId: 'prj_a' });
      await c.publish('settings', { projectId: 'prj_c' });
      for (const h of heard) expect(((await h) as { projectId: string }[]).map((p) => p.projectId).sort()).toEqual(['prj_a', 'prj_c']);
    });
  });
}
