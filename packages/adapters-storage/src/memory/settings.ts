import type { SettingsRepository } from '@agent-platform/core';
import { clone, type Tables } from './tables.js';

/** Knowledge settings in memory. */
export function memorySettings(tables: () => Tables): SettingsRepository {
  return {
    async get(projectId) {
      const settings = tables().settings.get(projectId);
      return settings && clone(settings);
    },
    async put(projectId, settings) {
      const t = tables();
      if (!t.projects.has(projectId)) throw new Error(`Project ${projectId} does not exist`);
      t.settings.set(projectId, clone(settings));
    },
  };
}
