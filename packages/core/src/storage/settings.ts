/** Knowledge settings of a project (RAG settings of the spec), stored as given. */
export interface SettingsRepository {
  get(projectId: string): Promise<Record<string, unknown> | undefined>;
  put(projectId: string, settings: Record<string, unknown>, at: Date): Promise<void>;
}
