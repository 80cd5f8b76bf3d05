import { useState } from 'preact/hooks';
import { AddDocuments } from './add-documents';
import { DocumentsTable } from './documents';
import { SearchPlayground } from './search';
import { SettingsForm } from './settings';

/** A project's knowledge: add documents, the documents table, the search playground, the settings. */
export function KnowledgeScreen({ projectId }: { projectId: string }) {
  // Bumped whenever an indexing ends, so the table shows the new document and its status.
  const [version, setVersion] = useState(0);
  return (
    <div class="stack">
      <AddDocuments projectId={projectId} onIndexed={() => setVersion((n) => n + 1)} />
      <DocumentsTable projectId={projectId} version={version} />
      <SearchPlayground projectId={projectId} />
      <SettingsForm projectId={projectId} onDocumentsChanged={() => setVersion((n) => n + 1)} />
    </div>
  );
}
