import type { ToolProgress, ToolSandbox } from '@agent-platform/core';
import { describeToolSandbox, worstTick } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { javascriptSandbox } from '../src/javascript.js';

describeToolSandbox('JavaScript (QuickJS in worker threads)', { language: 'javascript', create: () => javascriptSandbox({ workers: 2 }) });

describe('JavaScript progress', () => {
  let sandbox: ToolSandbox;
  beforeAll(() => {
    sandbox = javascriptSandbox({ workers: 1 });
  });
  afterAll(() => sandbox.close());

  it('sends a report that waits while the code computes without calling progress again', async () => {
    // The second report comes sooner than the interval; QuickJS's interrupt checks send it
    // once its time has come, long before the run's time limit ends the loop.
    const reports: ToolProgress[] = [];
    let settled = false;
    let second!: () => void;
    const both = new Promise<void>((resolve) => {
      second = resolve;
    });
    const running = sandbox
      .run({
        code: 'function main() { progress(1); progress(2, 2, "computing"); while (true) {} }',
        args: {},
        timeoutMs: 2000,
        memoryBytes: 32 << 20,
        onProgress: (p) => {
          reports.push(p);
          if (reports.length === 2) second();
        },
      })
      .finally(() => {
        settled = true;
      });
    await both;
    expect(settled).toBe(false);
    expect(reports).toEqual([{ progress: 1 }, { progress: 2, total: 2, message: 'computing' }]);
    expect(await running).toMatchObject({ ok: false, error: { kind: 'timeout' } });
  });

  it('keeps the event loop free while code floods progress', async () => {
    // The worker warm first (its start is not what is measured).
    await sandbox.run({ code: 'function main() { return 0; }', args: {}, timeoutMs: 2000, memoryBytes: 32 << 20 });
    const reports: ToolProgress[] = [];
    const { value, worst } = await worstTick(() =>
      sandbox.run({ code: 'function main() { for (let i = 0; i < 100000; i++) progress(i); return 1; }', args: {}, timeoutMs: 10_000, memoryBytes: 32 << 20, onProgress: (p) => reports.push(p) }),
    );
    expect(value).toMatchObject({ ok: true, result: 1 });
    expect(reports.at(-1)).toEqual({ progress: 99999 });
    expect(worst).toBeLessThan(100);
  });
});
