// The code editor: CodeMirror 6, loaded only when a tool is opened (a dynamic import, so its
// own chunk; the console's first load does not carry it), each language in a chunk of its own.
import { HighlightStyle, type LanguageSupport, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState } from '@codemirror/state';
import { tags as t } from '@lezer/highlight';
import { basicSetup, EditorView } from 'codemirror';

export type CodeLanguage = 'javascript' | 'python';

/** An editor in the page: what the console's form needs of it. */
export interface CodeEditorHandle {
  /** The language whose highlighting and indentation rules apply. */
  setLanguage(language: CodeLanguage): Promise<void>;
  destroy(): void;
}

const LANGUAGES: Record<CodeLanguage, () => Promise<LanguageSupport>> = {
  javascript: async () => (await import('@codemirror/lang-javascript')).javascript(),
  python: async () => (await import('@codemirror/lang-python')).python(),
};

/**
 * Colours from the console's own CSS variables (styles.css defines them for the light and the
 * dark theme), so the editor follows a theme switch with no reconfiguration; each token colour
 * keeps 4.5:1 contrast on the editor's background in both themes.
 */
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword, t.self, t.null, t.bool], color: 'var(--code-keyword)' },
  { tag: [t.string, t.special(t.string), t.regexp], color: 'var(--code-string)' },
  { tag: [t.number, t.atom], color: 'var(--code-number)' },
  { tag: [t.comment, t.lineComment, t.blockComment], color: 'var(--code-comment)', fontStyle: 'italic' },
  { tag: [t.function(t.variableName), t.function(t.propertyName), t.function(t.definition(t.variableName))], color: 'var(--code-function)' },
  { tag: [t.propertyName, t.definition(t.propertyName)], color: 'var(--code-property)' },
  { tag: [t.typeName, t.className, t.namespace], color: 'var(--code-type)' },
  { tag: t.invalid, color: 'var(--danger)' },
]);

const theme = EditorView.theme({
  '&': { color: 'var(--text)', backgroundColor: 'var(--bg)', border: '1px solid var(--line)', borderRadius: '6px', fontSize: '14px' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace', minHeight: '12rem', maxHeight: '28rem', overflow: 'auto' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { backgroundColor: 'var(--code-active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--code-active-line)', color: 'var(--text)' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--code-selection)' },
  '.cm-matchingBracket': { backgroundColor: 'var(--code-selection)', outline: '1px solid var(--muted)' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--line)' },
  '.cm-panels': { backgroundColor: 'var(--panel)', color: 'var(--text)' },
});

/**
 * Text typed over a selection that spans lines, replaced in the editor's model rather than by
 * the browser: Chromium's own editing joins the lines' elements and gives the joined one an
 * inline `style`, which the console's CSP refuses (a console error each time; CodeMirror redraws
 * the line anyway). Typing elsewhere, IME composition, paste and drop keep their usual paths.
 */
function typeOverLines(event: InputEvent, view: EditorView): boolean {
  if (event.inputType !== 'insertText' || event.isComposing || event.data === null) return false;
  const { state } = view;
  const spansLines = state.selection.ranges.some((r) => !r.empty && state.doc.lineAt(r.from).number !== state.doc.lineAt(r.to).number);
  if (!spansLines) return false;
  event.preventDefault();
  view.dispatch(state.update(state.replaceSelection(event.data), { userEvent: 'input.type', scrollIntoView: true }));
  return true;
}

const isDark = () => document.documentElement.dataset.theme === 'dark';

/**
 * Mounts an editor on `host`. The editor lives in a shadow root of the host: CodeMirror adds its
 * styles as a <style> element to a document, which the console's Content-Security-Policy (no
 * 'unsafe-inline') refuses, but as a constructed style sheet (CSSOM, which the policy allows) to
 * a shadow root. The CSS variables of the page reach into it.
 *
 * Tab is left to the browser (no `indentWithTab`), so Tab and Shift+Tab move the focus out of
 * the editor like out of any field; Mod-] and Mod-[ indent, Enter keeps the indentation.
 */
export async function mountCodeEditor(opts: {
  host: HTMLElement;
  text: string;
  language: CodeLanguage;
  /** The editor's accessible name (a label element cannot point into a shadow root). */
  label: string;
  /** Called with the whole text after each change the user makes. */
  onChange: (text: string) => void;
}): Promise<CodeEditorHandle> {
  const root = opts.host.shadowRoot ?? opts.host.attachShadow({ mode: 'open' });
  const language = new Compartment();
  const dark = new Compartment();
  const view = new EditorView({
    root,
    parent: root,
    state: EditorState.create({
      doc: opts.text,
      extensions: [
        basicSetup,
        theme,
        syntaxHighlighting(highlight),
        dark.of(EditorView.darkTheme.of(isDark())),
        language.of(await LANGUAGES[opts.language]()),
        EditorView.contentAttributes.of({ 'aria-label': opts.label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) opts.onChange(update.state.doc.toString());
        }),
        EditorView.domEventHandlers({ beforeinput: typeOverLines }),
      ],
    }),
  });
  // The base theme's own dark and light details (panels, tooltips) follow the console's switch.
  const themeWatch = new MutationObserver(() => view.dispatch({ effects: dark.reconfigure(EditorView.darkTheme.of(isDark())) }));
  themeWatch.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return {
    async setLanguage(next) {
      view.dispatch({ effects: language.reconfigure(await LANGUAGES[next]()) });
    },
    destroy() {
      themeWatch.disconnect();
      view.destroy();
    },
  };
}
