import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { PlatformError } from '../errors.js';

/**
 * Encrypts secrets at rest with AES-256-GCM. A sealed secret is
 * `v1:<base64 of 12-byte IV | 16-byte tag | ciphertext>`; the key id is not stored, so rotating
 * the master key means re-sealing every secret.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/**
 * A box from a 32-byte key, or from any passphrase (hashed with SHA-256 to 32 bytes, as
 * `AGENT_PLATFORM_SECRET` may be any string).
 */
export function createSecretBox(key: Uint8Array | string): SecretBox {
  const k = typeof key === 'string' ? createHash('sha256').update(key, 'utf8').digest() : Buffer.from(key);
  if (k.length !== 32) throw new Error('The master key must be 32 bytes');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed) {
      if (!sealed.startsWith('v1:')) throw new PlatformError('internal', 'Unknown secret format');
      const raw = Buffer.from(sealed.slice(3), 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', k, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch {
        throw new PlatformError('internal', 'A stored secret cannot be decrypted: the master key changed (AGENT_PLATFORM_SECRET or the key file)');
      }
    },
  };
}
