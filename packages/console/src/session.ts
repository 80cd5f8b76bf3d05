/**
 * Where the console keeps what it must remember. The API key lives in sessionStorage only: it
 * goes when the tab closes, is never written to localStorage or a cookie, and never appears in a
 * URL (routes are hash fragments without it). The theme, which is no secret, is kept in
 * localStorage.
 */
const KEY = 'agent-platform.key';
const THEME = 'agent-platform.theme';
const PENDING = 'agent-platform.pending-answer';

export const storedKey = (): string | null => sessionStorage.getItem(KEY);
export const storeKey = (key: string): void => sessionStorage.setItem(KEY, key);
export const forgetKey = (): void => {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(PENDING);
};

export type Theme = 'light' | 'dark';

/** The chosen theme, else the system's. */
export function storedTheme(): Theme {
  const saved = localStorage.getItem(THEME);
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme, remember: boolean): void {
  document.documentElement.dataset.theme = theme;
  if (remember) localStorage.setItem(THEME, theme);
}

/** A chat answer being streamed into a resumable stream: a reload picks it up again. */
export interface PendingAnswer {
  readonly projectId: string;
  readonly chatId: string;
  readonly streamId: string;
  readonly question: string;
  /**
   * The answer continues a turn paused for approval: the decision's approval and the tool call
   * it decided (once the call has a stored result, the continuation is stored: nothing to replay).
   */
  readonly continues?: { readonly approvalId: string; readonly callId: string };
}

export function pendingAnswer(): PendingAnswer | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as PendingAnswer | null;
    return value && typeof value.chatId === 'string' && typeof value.streamId === 'string' ? value : null;
  } catch {
    return null;
  }
}

export const setPendingAnswer = (value: PendingAnswer | null): void => (value ? sessionStorage.setItem(PENDING, JSON.stringify(value)) : sessionStorage.removeItem(PENDING));
