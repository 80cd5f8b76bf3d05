import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Runs the linter's own binary on a file; never reaches the network (telemetry and update checks off). */
function redoclyLint(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      join(ROOT, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'],
      { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' }, timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('/openapi.json', () => {
  it('matches the committed contract (review a change of __snapshots__/openapi.json like code)', async () => {
    const app = createApp(new AgentPlatform({ storage: memoryStorage() }));
    const document = await (await app.request('/openapi.json')).json();
    await expect(`${JSON.stringify(document, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/openapi.json');
  });

  it('has plain-text summaries (swagger-ui shows markdown literally)', async () => {
    const document = await (await createApp(new AgentPlatform({ storage: memoryStorage() })).request('/openapi.json')).json();
    const summaries = Object.values(document.paths as Record<string, Record<string, { summary: string }>>).flatMap((ops) => Object.values(ops).map((op) => op.summary));
    expect(summaries.length).toBeGreaterThan(40);
    expect(summaries.filter((summary) => /[`*]|\]\(|^#/.test(summary))).toEqual([]);
  });

  it('passes redocly lint (recommended rules) with no errors and no warnings', async () => {
    const app = createApp(new AgentPlatform({ storage: memoryStorage() }));
    const document = await (await app.request('/openapi.json')).text();
    const dir = await mkdtemp(join(tmpdir(), 'ap-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, document);
      const { code, stdout, stderr } = await redoclyLint(file);
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
      const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
      expect(problems, stderr).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
      expect(code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
