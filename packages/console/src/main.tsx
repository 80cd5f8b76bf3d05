import { render } from 'preact';
import { App } from './app';
import { applyTheme, storedTheme } from './session';
import './styles.css';

applyTheme(storedTheme(), false);
const root = document.getElementById('app');
if (root) {
  // The page's "Loading the console…" goes once the app renders in its place.
  root.replaceChildren();
  render(<App />, root);
}
