const UNITS = ['bytes', 'kB', 'MB', 'GB', 'TB'] as const;

/**
 * A byte count as people read it, in decimal units as Ollama writes model sizes
 * (`2019393189` → `2.0 GB`, `999` → `999 bytes`): three significant digits at most.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return `${value} ${value === 1 ? 'byte' : 'bytes'}`;
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${UNITS[unit]}`;
}

/** A time as the browser's locale writes it; `none` when there is none (`lastUsedAt: null`). */
export function formatTime(iso: string | null | undefined, none = 'never'): string {
  if (!iso) return none;
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : time.toLocaleString();
}

/** A digest cut for a table (`sha256:0123456789ab`): the algorithm and the first 12 hex digits. */
export function shortDigest(digest: string): string {
  const [algorithm, hex] = digest.includes(':') ? (digest.split(':', 2) as [string, string]) : ['', digest];
  const short = hex.length > 12 ? hex.slice(0, 12) : hex;
  return algorithm ? `${algorithm}:${short}` : short;
}
