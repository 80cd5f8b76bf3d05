import { describe, expect, it } from 'vitest';
import { checkFieldsOf, mergeFields, openFields, sealFields, secretValues } from '../src/credentials/fields.js';
import { isPlatformError } from '../src/errors.js';
import { createSecretBox } from '../src/security/secrets.js';
import type { CredentialRecord } from '../src/storage/types.js';

const box = createSecretBox('k'.repeat(32));
const record = (over: Partial<CredentialRecord>): CredentialRecord => ({
  id: 'cred_1',
  userId: 'user_a',
  name: 'c',
  provider: 'openai',
  secret: '',
  fields: null,
  last4: '',
  baseUrl: null,
  baseUrlSecret: null,
  proxy: false,
  isValid: null,
  isDefault: false,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

describe("a credential's provider fields at rest", () => {
  it('seals every field together and shows only the last four characters of secrets', () => {
    const sealed = sealFields('openai', { apiKey: 'sk-very-secret-1234' }, box);
    expect(sealed.fields).toEqual({ values: {}, last4: { apiKey: '1234' } });
    expect(sealed.last4).toBe('1234');
    expect(sealed.secret).not.toContain('very-secret');
    expect(openFields(record(sealed), box)).toEqual({ apiKey: 'sk-very-secret-1234' });
    expect(secretValues('openai', { apiKey: 'sk-very-secret-1234' })).toEqual(['sk-very-secret-1234']);
  });

  it('reads a credential stored before fields existed: its secret is the API key alone', () => {
    expect(openFields(record({ secret: box.seal('sk-legacy-key'), last4: '-key' }), box)).toEqual({ apiKey: 'sk-legacy-key' });
  });

  it('merges an update: a value replaces, null removes an optional field', () => {
    expect(mergeFields({ apiKey: 'a', sessionToken: 't', region: 'us-east-1' }, { apiKey: 'b', sessionToken: null })).toEqual({ apiKey: 'b', region: 'us-east-1' });
  });

  it("refuses fields that are not the provider's, naming each under data", () => {
    let error: unknown;
    try {
      checkFieldsOf('ollama', { apiKey: 'x', region: 'r', endpoint: 'e' });
    } catch (e) {
      error = e;
    }
    expect(isPlatformError(error) && error.issues?.map((i) => i.path.join('.'))).toEqual(['data.region', 'data.endpoint']);
    expect(() => checkFieldsOf('openai', { apiKey: 'x' })).not.toThrow();
  });
});
