import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createSecretBox, type SecretBox } from '@agent-platform/core';

/**
 * The master key for secrets at rest: `AGENT_PLATFORM_SECRET` when set (any string), else the
 * key file `secret.key` in the data folder, created once with 32 random bytes and mode 0600.
 */
export async function loadSecretBox(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<SecretBox> {
  if (env.AGENT_PLATFORM_SECRET) return createSecretBox(env.AGENT_PLATFORM_SECRET);
  const path = join(resolve(dataDir), 'secret.key');
  try {
    return createSecretBox(Buffer.from((await readFile(path, 'utf8')).trim(), 'hex'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32);
  // `wx`: never overwrite a key file another process created meanwhile.
  await writeFile(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await chmod(path, 0o600);
  return createSecretBox(Buffer.from((await readFile(path, 'utf8')).trim(), 'hex'));
}
