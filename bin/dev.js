#!/usr/bin/env -S node --import tsx
// Development entry: the TypeScript sources through tsx, no build needed (`node --import tsx bin/dev.js …`).
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/main.ts';

void main(process.argv.slice(2), fileURLToPath(new URL('..', import.meta.url)), { development: true });
