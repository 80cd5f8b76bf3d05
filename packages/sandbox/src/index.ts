export { type JavaScriptSandboxOptions, javascriptSandbox } from './javascript.js';
export { type NpmDependencies, type NpmDependenciesOptions, npmDependencies } from './npm-dependencies.js';
export { type PythonSandbox, type PythonSandboxOptions, pythonSandbox } from './python.js';
export type { PythonIsolation } from './python-isolation.js';
