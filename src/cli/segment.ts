// The pieces a printed line is made of, apart from output.ts so that what builds them (json-colour.ts)
// need not import the whole output module.
import type { styleText } from 'node:util';

export type Style = Parameters<typeof styleText>[0];

/** A piece of a printed line: plain strings are stripped of control characters, styled ones coloured too. */
export type Segment = string | { readonly text: string; readonly style: Style };
