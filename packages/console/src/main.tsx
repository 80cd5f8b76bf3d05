import { render } from 'preact';
import { App } from './app';
import { applyTheme, storedTheme } from './session';
import './styles.css';

applyTheme(storedTheme(), false);
const root = document.getElementById('app');
if (root) render(<App />, root);
