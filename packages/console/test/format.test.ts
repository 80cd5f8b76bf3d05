import { describe, expect, it } from 'vitest';
import { formatBytes, formatTime, shortDigest } from '../src/components/format.js';

describe("the console's formats", () => {
  it('writes sizes in decimal units as Ollama does, three significant digits at most', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(999)).toBe('999 bytes');
    expect(formatBytes(1000)).toBe('1.0 kB');
    expect(formatBytes(274_302_450)).toBe('274 MB');
    expect(formatBytes(2_019_393_189)).toBe('2.0 GB');
    expect(formatBytes(40_000_000_000)).toBe('40.0 GB');
    expect(formatBytes(3.2e15)).toBe('3200 TB');
    expect(formatBytes(-1)).toBe('—');
  });

  it('cuts a digest to its algorithm and 12 hex digits, and says never for a missing time', () => {
    const hex = 'a'.repeat(64);
    expect(shortDigest(`sha256:${hex}`)).toBe('sha256:aaaaaaaaaaaa');
    expect(shortDigest(hex)).toBe('aaaaaaaaaaaa');
    expect(shortDigest('sha256:abc')).toBe('sha256:abc');
    expect(formatTime(null)).toBe('never');
    expect(formatTime('not a time')).toBe('not a time');
    expect(formatTime('2024-05-01T17:00:00.000Z')).toBe(new Date('2024-05-01T17:00:00.000Z').toLocaleString());
  });
});
