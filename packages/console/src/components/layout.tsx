import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Route, SECTIONS } from '../router';
import { applyTheme, storedTheme, type Theme } from '../session';

/** The frame of every signed-in screen: a skip link, the header, the navigation and the main area. */
export function Layout({ route, onSignOut, children }: { route: Route; onSignOut: () => void; children: ComponentChildren }) {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const toggle = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    applyTheme(next, true);
    setTheme(next);
  };
  const current = route.name === 'project' ? 'projects' : route.name;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/projects">
          Agent Platform
        </a>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((s) => (
              <li key={s.id}>
                <a href={s.href} aria-current={current === s.id ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="top-actions">
          {/* The API reference (swagger-ui of /openapi.json), served by the same server. */}
          <a href="/docs" target="_blank" rel="noopener">
            API reference<span class="visually-hidden"> (opens in a new tab)</span>
          </a>
          <button type="button" onClick={toggle} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
            {theme === 'dark' ? 'Light theme' : 'Dark theme'}
          </button>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
