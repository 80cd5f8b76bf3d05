import { describeStorageAdapter } from '@agent-platform/core/testing';
import { memoryStorage } from '../src/memory/index.js';

describeStorageAdapter('memory', { create: () => memoryStorage() });
