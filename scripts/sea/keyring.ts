// '@napi-rs/keyring' as the bundle sees it: scripts/bundle/esbuild-plugins.ts redirects every import of the package
// here. Inside the single executable the addon comes from the executable itself (native-addon.ts); a
// bundle run by a plain `node` requires the installed package as usual.
import { createRequire } from 'node:module';
import { isSea } from 'node:sea';
import type * as Keyring from '@napi-rs/keyring';
import { loadEmbeddedAddon } from './native-addon.js';

const binding = (
  isSea() ? loadEmbeddedAddon('keyring') : createRequire(__filename)('@napi-rs/keyring')
) as typeof Keyring;

export const { AsyncEntry, Entry, findCredentials, findCredentialsAsync } = binding;
/** Declared as a type only, but the package exports it at run time too. */
export const LinuxStore: unknown = (binding as unknown as Record<string, unknown>).LinuxStore;
export default binding;
