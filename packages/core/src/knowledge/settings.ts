import { PlatformError } from '../errors.js';
import {
  DEFAULT_ALPHA,
  DEFAULT_CHUNK_OVERLAP,
  DEFAULT_CHUNK_SIZE,
  DEFAULT_SEARCH_TYPE,
  DEFAULT_TOP_K,
  type EffectiveKnowledgeSettings,
  type KnowledgeSettings,
  type KnowledgeSettingsChange,
  SETTING_NAMES,
  type SettingName,
} from '../schemas/knowledge.js';
import { redactSettings, restoreRedacted } from './settings-secrets.js';

/**
 * What each setting is while a project has not set it. `minScore` and `vectorStoreConfig` have
 * no single value: null (search keeps every hit and the agent applies its own floor; no config).
 */
export const SETTING_DEFAULTS: EffectiveKnowledgeSettings = {
  vectorstoreProvider: 'builtin',
  vectorStoreConfig: null,
  embeddingModel: 'builtin',
  chunkSize: DEFAULT_CHUNK_SIZE,
  chunkOverlap: DEFAULT_CHUNK_OVERLAP,
  searchType: DEFAULT_SEARCH_TYPE,
  topK: DEFAULT_TOP_K,
  minScore: null,
  alpha: DEFAULT_ALPHA,
};

/**
 * The settings after a change: members the change leaves out keep their stored value, `null`
 * takes one back to its default (it is no longer stored), any other value replaces it
 * (`vectorStoreConfig` as a whole). A secret of the new `vectorStoreConfig` sent back redacted,
 * as GET answers it, keeps the stored secret (`restoreRedacted`). Checked as a whole:
 * `chunkOverlap`, when set, must stay below the chunk size in effect (`invalid_request` naming both).
 */
export function applySettingsChange(previous: KnowledgeSettings, change: KnowledgeSettingsChange): KnowledgeSettings {
  const next: Record<string, unknown> = { ...previous };
  for (const name of SETTING_NAMES) {
    const value = change[name];
    if (value === null) delete next[name];
    else if (value !== undefined) next[name] = value;
  }
  const merged = change.vectorStoreConfig ? restoreRedacted(next as KnowledgeSettings, previous) : (next as KnowledgeSettings);
  const size = merged.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (merged.chunkOverlap !== undefined && merged.chunkOverlap >= size) {
    const why = `must be smaller than chunkSize (${size}${merged.chunkSize === undefined ? ', the default' : ''}), is ${merged.chunkOverlap}`;
    throw PlatformError.invalid(`settings.chunkOverlap: ${why}`, [{ path: ['settings', 'chunkOverlap'], code: 'custom', message: why }]);
  }
  return merged;
}

/** Every setting's value in effect (secrets redacted) and the names of those at their default. */
export function effectiveSettings(stored: KnowledgeSettings): { settings: EffectiveKnowledgeSettings; defaults: SettingName[] } {
  const shown = redactSettings(stored);
  const settings: Record<string, unknown> = {};
  const defaults: SettingName[] = [];
  for (const name of SETTING_NAMES) {
    const value = shown[name];
    if (value === undefined) defaults.push(name);
    settings[name] = value ?? SETTING_DEFAULTS[name];
  }
  return { settings: settings as EffectiveKnowledgeSettings, defaults };
}

/** Whether a change of settings changes how documents are cut into chunks (their chunks stay as they were until re-indexed). */
export function chunkingChanged(before: KnowledgeSettings, after: KnowledgeSettings): boolean {
  const size = (s: KnowledgeSettings) => s.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const overlap = (s: KnowledgeSettings) => s.chunkOverlap ?? DEFAULT_CHUNK_OVERLAP;
  return size(before) !== size(after) || overlap(before) !== overlap(after);
}
