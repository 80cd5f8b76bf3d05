import { describe, expect, it } from 'vitest';
import { createMemoryNotifier } from '../src/notify/notifier.js';
import { describeNotifier } from '../src/testing/notifier-suite.js';

describeNotifier('memory', { create: async () => createMemoryNotifier() });

describe('memory notifier', () => {
  it('reaches only its own process: two notifiers do not hear each other', async () => {
    const a = createMemoryNotifier();
    const b = createMemoryNotifier();
    const heard: unknown[] = [];
    b.subscribe('settings', (p) => heard.push(p));
    await a.publish('settings', 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(heard).toEqual([]);
  });
});
