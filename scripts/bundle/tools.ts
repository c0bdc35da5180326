// The build's files and processes: the project's folders, the executable's assets (a file and its sha256),
// Node 24 and postject from node_modules, and running a tool.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
// Under dist/ (ignored by git, eslint and prettier): the bundle, its metafile, the SEA blob.
export const work = join(root, 'dist/sea-build');
export const node = join(root, 'node_modules/.bin/node');

/** A file the build puts in the executable, and its sha256 (the executable checks a native addon's before
 *  use; WebAssembly is validated by V8 as it compiles). */
export interface Asset {
  path: string;
  sha256: string;
}

/** A file of an installed package, and its sha256. */
export function packageFile(specifier: string): Asset {
  return fileAsset(join(root, 'node_modules', specifier));
}

export function fileAsset(path: string): Asset {
  return { path, sha256: sha256Of(path) };
}

export function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

export function keyringAddon(): Asset {
  const scope = join(root, 'node_modules/@napi-rs');
  const platform = `${process.platform}-${process.arch}`;
  for (const pkg of readdirSync(scope).filter((d) => d.startsWith(`keyring-${platform}`))) {
    const file = readdirSync(join(scope, pkg)).find((f) => f.endsWith('.node'));
    if (file === undefined) continue;
    return fileAsset(join(scope, pkg, file));
  }
  throw new Error(`No @napi-rs/keyring addon for ${platform} in node_modules: run npm ci on this platform.`);
}

export function moduleFile(target: string): string {
  const candidates = [target, `${target}.js`, join(target, 'index.js')];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  if (found === undefined) throw new Error(`No module at ${target}`);
  return found;
}

export function nodeBinary(): string {
  const binary = join(root, 'node_modules/node/bin/node');
  if (!existsSync(binary))
    throw new Error('Node 24 is missing from node_modules (the `node` package): run npm ci.');
  return binary;
}

export function postjectCli(): string {
  const pkg = join(root, 'node_modules/postject');
  const { bin } = readJson(join(pkg, 'package.json')) as { bin: Record<string, string> };
  return join(pkg, bin.postject ?? 'dist/cli.js');
}

export function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8'));
}

export async function commandExists(name: string): Promise<boolean> {
  return (await exec('sh', ['-c', `command -v ${name}`], { quiet: true, allowFailure: true })) === 0;
}

/**
 * A tool's standard output; on failure an Error naming the command, its exit code and its standard error
 * (also as `stderr`).
 */
export function execText(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0
        ? done(out)
        : fail(
            Object.assign(new Error(`${command} ${args.join(' ')} exited ${code}\n${err.trim()}`), {
              stderr: err,
            }),
          ),
    );
  });
}

export interface ExecOptions {
  quiet?: boolean;
  allowFailure?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export function exec(command: string, args: string[], options: ExecOptions = {}): Promise<number> {
  const { quiet = false, allowFailure = false, cwd = root, env = process.env } = options;
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', quiet ? 'pipe' : 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0 || allowFailure) done(code ?? 1);
      else fail(new Error(`${command} ${args.join(' ')} exited ${code}\n${stderr}`));
    });
  });
}
