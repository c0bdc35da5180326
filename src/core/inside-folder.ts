// Whether a path lies inside a folder, for files a project names (dbt's seeds) that must stay in it. Not by
// text: `/p/shop-other` starts with `/p/shop`, and the folder `/` would need `//`.
import { isAbsolute, relative, sep } from 'node:path';

/** `path` is inside `folder` (both absolute and resolved): the folder itself is not. */
export function isInsideFolder(folder: string, path: string): boolean {
  const within = relative(folder, path);
  return within !== '' && within !== '..' && !within.startsWith(`..${sep}`) && !isAbsolute(within);
}
