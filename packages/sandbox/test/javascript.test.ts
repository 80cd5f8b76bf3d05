import { describeToolSandbox } from '@agent-platform/core/testing';
import { javascriptSandbox } from '../src/javascript.js';

describeToolSandbox('JavaScript (QuickJS in worker threads)', { language: 'javascript', create: () => javascriptSandbox({ workers: 2 }) });
