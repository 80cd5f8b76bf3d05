/**
 * What answers show of a credential's provider fields (registries/model-providers.ts): the
 * values of the fields that are not secrets (addresses masked) and the last four characters of
 * each secret.
 */
export interface ShownCredentialFields {
  readonly values: Readonly<Record<string, unknown>>;
  readonly last4: Readonly<Record<string, string>>;
}

export interface CredentialRecord {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly provider: string;
  /**
   * Encrypted (`SecretBox` format), never in the clear: the JSON object of every provider field
   * (`{ "apiKey": ... }`, Bedrock's keys and region, ...) when `fields` is set; the API key alone
   * for a credential stored before fields existed (`fields` null).
   */
  readonly secret: string;
  /** What answers show of the provider fields; null for a credential stored before fields existed (an API key only). */
  readonly fields: ShownCredentialFields | null;
  /** Last four characters of the key, to tell keys apart. */
  readonly last4: string;
  /** The server address, with any user:password and query values masked (`****`) when `baseUrlSecret` holds it. */
  readonly baseUrl: string | null;
  /** The whole `baseUrl`, encrypted (`SecretBox` format), when it carries user:password or a query; else null. */
  readonly baseUrlSecret: string | null;
  readonly proxy: boolean;
  /** Whether the credential last worked (its test, or as a caller set it); null when unknown. */
  readonly isValid: boolean | null;
  /**
   * The user's default credential of `provider`: the one calls of projects that name no
   * credential use. At most one per user and provider (storage enforces it).
   */
  readonly isDefault: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/**
 * A credential to store. `isDefault`: `true` makes it its provider's default for the user (the
 * previous default stops being one), `false` never, `'if-none'` only when the user has no
 * default of the provider yet (so the first credential of a provider is its default).
 */
export type NewCredential = Omit<CredentialRecord, 'isDefault'> & { readonly isDefault: boolean | 'if-none' };

export type CredentialPatch = Partial<Pick<CredentialRecord, 'name' | 'secret' | 'fields' | 'last4' | 'baseUrl' | 'baseUrlSecret' | 'proxy' | 'isValid' | 'isDefault'>> & {
  readonly updatedAt: Date;
};

/**
 * A user's provider credentials. The default rule (at most one `isDefault` per user and
 * provider) holds under concurrent writes from any number of instances: `insert` and `update`
 * that touch it decide and write in one atomic step, and the database refuses a second default
 * (a partial unique index) whatever a writer does.
 */
export interface CredentialRepository {
  /** Stores the credential and answers it as stored, `isDefault` decided (see `NewCredential`). */
  insert(credential: NewCredential): Promise<CredentialRecord>;
  get(userId: string, id: string): Promise<CredentialRecord | undefined>;
  /** The user's credentials, newest first. */
  list(userId: string): Promise<CredentialRecord[]>;
  /** The user's default credential of `provider`, or undefined when there is none. */
  defaultOf(userId: string, provider: string): Promise<CredentialRecord | undefined>;
  /**
   * Changes the given members; answers the updated row, or undefined when the user has no such
   * credential. `isDefault: true` moves the provider's default here (the previous default stops
   * being one); `isDefault: false` leaves the provider without a default when this was it.
   */
  update(userId: string, id: string, patch: CredentialPatch): Promise<CredentialRecord | undefined>;
  delete(userId: string, id: string): Promise<boolean>;
}
