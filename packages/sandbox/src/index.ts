export { type JavaScriptSandboxOptions, javascriptSandbox } from './javascript.js';
