import type { PythonIsolation } from '@agent-platform/sandbox';

const ISOLATIONS: readonly PythonIsolation[] = ['auto', 'namespaces', 'process'];

/** The Python isolation named by a flag or env value, or an error naming the choices. */
export function parsePythonIsolation(value: string): PythonIsolation {
  const found = ISOLATIONS.find((i) => i === value);
  if (!found) throw new Error(`Python isolation must be one of ${ISOLATIONS.join(', ')}, got "${value}"`);
  return found;
}
