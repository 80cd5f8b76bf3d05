import type { BodyOf, ResultOf } from '../../api/client';
import { CREDENTIAL_FIELDS } from '../../api/enums';

export type Credential = ResultOf<'/api/v1/credentials', 'get'>['credentials'][number];
export type Provider = BodyOf<'/api/v1/credentials', 'post'>['provider'];
type Patch = BodyOf<'/api/v1/credentials/{id}', 'patch'>['data'];

/** A provider's own credential field, as generated from the API's contract (src/api/enums.ts). */
export interface ProviderField {
  readonly name: string;
  readonly required: boolean;
  readonly secret: boolean;
  readonly kind: 'text' | 'url' | 'map';
  readonly description: string;
}

/** The provider's fields, in the contract's order: a new provider of the registry brings its own, without a list here. */
export const fieldsOf = (provider: Provider): readonly ProviderField[] => CREDENTIAL_FIELDS[provider];

/** Every field name of every provider (where the service's 400 may point). */
export const ALL_FIELDS: readonly string[] = [...new Set(Object.values(CREDENTIAL_FIELDS).flatMap((list) => list.map((f) => f.name)))];

/** A map field (Azure's deployments) as text: one `name = value` a line. */
export const mapText = (value: unknown): string =>
  value && typeof value === 'object'
    ? Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${k} = ${String(v)}`)
        .join('\n')
    : '';

/** The lines of a map field as its object, or the sentence saying which line is not `name = value`. */
export function parseMap(text: string): { value: Record<string, string> } | { error: string } {
  const value: Record<string, string> = {};
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    const match = /^\s*([^=]+?)\s*=\s*(\S.*?)\s*$/.exec(line);
    if (!match) return { error: `Line ${i + 1} is not "name = value"` };
    value[match[1] as string] = match[2] as string;
  }
  return { value };
}

/** What the form shows of a credential's fields: the shown values (never a secret: the API returns none), a map as its lines. */
export function initialFields(provider: Provider, credential: Credential | null): Record<string, string> {
  return Object.fromEntries(
    fieldsOf(provider).map((f) => {
      const shown = f.secret ? undefined : credential?.fields[f.name];
      return [f.name, f.kind === 'map' ? mapText(shown) : shown === undefined || shown === null ? '' : String(shown)];
    }),
  );
}

/**
 * The provider's fields to send: for a new credential the ones filled in; for a change, a secret
 * typed in (empty keeps it), a shown field that changed (emptied: null, which removes an optional
 * one). A map's lines that are not `name = value` are the field's error instead.
 */
export function fieldsToSend(provider: Provider, values: Record<string, string>, credential: Credential | null): { data: Record<string, unknown>; errors: Record<string, string> } {
  const data: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  const before = credential ? initialFields(provider, credential) : null;
  for (const f of fieldsOf(provider)) {
    const raw = values[f.name] ?? '';
    const text = f.secret ? raw : raw.trim();
    if (f.secret ? text === '' : before ? text === (before[f.name] ?? '').trim() : text === '') continue;
    if (text === '') {
      data[f.name] = null;
      continue;
    }
    if (f.kind !== 'map') {
      data[f.name] = text;
      continue;
    }
    const parsed = parseMap(text);
    if ('error' in parsed) errors[f.name] = parsed.error;
    else data[f.name] = parsed.value;
  }
  return { data, errors };
}

/** The change of a credential's provider fields, typed as the API's PATCH `data` takes them (the service checks each against the provider). */
export const asPatch = (data: Record<string, unknown>): Partial<Patch> => data as Partial<Patch>;
