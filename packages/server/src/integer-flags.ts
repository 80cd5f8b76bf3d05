/** A setting `agent-platform serve` takes as an integer flag and an env variable. */
export interface IntegerFlag<K extends string> {
  /** Without the leading `--`. */
  readonly flag: string;
  readonly env: string;
  /** Where the value goes in the parsed settings. */
  readonly key: K;
  /** Smallest value that makes sense. */
  readonly min: number;
  /** Largest value that makes sense; default none. */
  readonly max?: number;
  /** What applies when neither the flag nor the variable is given (shown in the error). */
  readonly defaultValue: number;
}

/**
 * The settings given as flags (`values`, by flag name) or else env variables; throws an `Error`
 * naming the flag and its variable for a value that is not an integer in the flag's range.
 */
export function integerFlagsFrom<K extends string>(flags: readonly IntegerFlag<K>[], values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): Partial<Record<K, number>> {
  const settings: Partial<Record<K, number>> = {};
  for (const { flag, env: name, key, min, max, defaultValue } of flags) {
    const given = values[flag];
    const value = typeof given === 'string' ? given : env[name];
    if (value === undefined || value === '') continue;
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
      const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
      throw new Error(`--${flag} (${name}) must be an integer ${range} (default ${defaultValue}), got "${value}"`);
    }
    settings[key] = n;
  }
  return settings;
}
