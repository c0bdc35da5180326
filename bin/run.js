#!/usr/bin/env node
// Production entry: the compiled CLI in dist/ (`npm run build`). Not awaited: when stdout closes early
// (`gds --help | head -1`) oclif's final flush never settles, and the process should still just end.
import { fileURLToPath } from 'node:url';
import { main } from '../dist/cli/main.js';

void main(process.argv.slice(2), fileURLToPath(new URL('..', import.meta.url)));
