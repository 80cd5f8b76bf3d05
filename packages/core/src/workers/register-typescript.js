// `node --import` this to run TypeScript sources (see typescript-hooks.js).
import { register } from 'node:module';

register(new URL('./typescript-hooks.js', import.meta.url));
