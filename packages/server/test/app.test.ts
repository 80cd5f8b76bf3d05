import { Writable } from 'node:stream';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('createApp', () => {
  it('logs one line per request with its request id, method, path, status and duration', async () => {
    const { logger, lines } = captureLogger();
    const platform = new AgentPlatform({ storage: memoryStorage() });
    const { key } = await platform.createUserWithKey({ name: 'k' });
    const app = createApp(platform, { logger });
    const res = await app.request('/api/v1/projects?limit=5', { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'req-1' } });
    expect(res.status).toBe(200);
    await new Promise((r) => setImmediate(r));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', reqId: 'req-1', method: 'GET', path: '/api/v1/projects', status: 200, ms: expect.any(Number) }));
    expect(JSON.stringify(lines)).not.toContain(key);
  });

  it('sends no CORS headers unless origins are configured', async () => {
    const app = createApp(new AgentPlatform({ storage: memoryStorage() }));
    const res = await app.request('/health', { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers preflight and adds CORS headers for configured origins only', async () => {
    const app = createApp(new AgentPlatform({ storage: memoryStorage() }), { corsOrigins: ['https://app.example'] });
    const preflight = await app.request('/api/v1/projects', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');

    const simple = await app.request('/health', { headers: { origin: 'https://app.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const other = await app.request('/health', { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers 500 without details when a storage bug throws, and logs it', async () => {
    const { logger, lines } = captureLogger();
    const storage = memoryStorage();
    const platform = new AgentPlatform({ storage });
    const { key } = await platform.createUserWithKey({ name: 'k' });
    storage.projects.list = async () => {
      throw new Error('disk on fire');
    };
    const app = createApp(platform, { logger });
    const res = await app.request('/api/v1/projects', { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ success: false, message: 'Internal server error', code: 'internal' });
    expect(lines.some((l) => l.msg === 'unhandled error' && JSON.stringify(l).includes('disk on fire'))).toBe(true);
  });
});
