import { isDbtProperties, readDbtModel } from './dbt.js';
import { readDeclaration } from './declaration.js';
import { loadJson, writtenJson, yamlDocument } from './document.js';
import { loadYaml } from '../libraries/yaml.js';
import type { ArtifactError, ArtifactFile, ArtifactKind, ParseResult } from './types.js';
import { readSql } from './sql.js';

const KIND_BY_EXTENSION: Readonly<Record<string, ArtifactKind>> = {
  sql: 'sql',
  yml: 'yaml',
  yaml: 'yaml',
  json: 'json',
};

/** The artifact kind named by a file's extension (case-insensitive), or undefined when the service does not take it. */
export function artifactKindOf(fileName: string): ArtifactKind | undefined {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? KIND_BY_EXTENSION[base.slice(dot + 1).toLowerCase()] : undefined;
}

/**
 * Parses a governance artifact (spec §2.10) without any I/O. The kind is the declared one (a definition's
 * `mimeType`) or else the file name's extension; a declared kind that contradicts the extension is refused. Never throws: a file that cannot be read as an
 * artifact gives `{ok: false, error}` with the position of the problem when there is one.
 */
export async function parseArtifact({
  fileName,
  content,
  kind: declared,
  dialect,
  model,
}: ArtifactFile): Promise<ParseResult> {
  const named = artifactKindOf(fileName);
  if (declared && named && declared !== named) {
    const message = `the file name says ${named} but the declared type is ${declared}`;
    return { ok: false, error: { code: 'kind_mismatch', message } };
  }
  const kind = declared ?? named;
  if (!kind) return { ok: false, error: { code: 'unsupported_file_type', message: 'Unsupported file type' } };
  const text = content.startsWith('\uFEFF') ? content.slice(1) : content;
  if (text.trim() === '') return { ok: false, error: { code: 'empty_file', message: 'the file is empty' } };
  try {
    if (kind === 'sql') {
      if (model !== undefined) {
        const message = `--model ${model} picks a model of a dbt properties file, and this is a SQL file`;
        return { ok: false, error: { code: 'model_not_applicable', message } };
      }
      if (isDbtTemplate(text)) return { ok: false, error: dbtTemplateError(fileName) };
      return await readSql(text, dialect, fileName);
    }
    const yaml = await loadYaml();
    const loaded = kind === 'yaml' ? yamlDocument(yaml, text) : loadJson(yaml, text);
    if (!loaded.ok) return loaded;
    const { document } = loaded;
    if (kind === 'yaml' && isDbtProperties(document.value))
      return readDbtModel({ ...document, value: document.value }, model);
    if (model !== undefined) {
      const message = `--model ${model} picks a model of a dbt properties file (models: or sources: lists), and this file is not one`;
      return { ok: false, error: { code: 'model_not_applicable', message } };
    }
    return readDeclaration(kind, document);
  } catch (err) {
    return { ok: false, error: unreadable(kind, err) };
  }
}

/**
 * parseArtifact of JSON text that the caller wrote from `value` (JSON.stringify's): the same artifact, or the
 * same refusal at the same position, without parsing the text back (`gds plan` reads a project's artifacts
 * from the values it wrote them from). Any other file goes to parseArtifact.
 */
export async function parseWrittenJson(file: ArtifactFile, value: unknown): Promise<ParseResult> {
  const { fileName, content, kind, dialect, model } = file;
  const plain = kind === undefined && dialect === undefined && model === undefined;
  if (!plain || artifactKindOf(fileName) !== 'json' || content.startsWith('\uFEFF') || !/\S/.test(content))
    return parseArtifact(file);
  const yaml = await loadYaml();
  try {
    return readDeclaration('json', writtenJson(yaml, content, value));
  } catch (err) {
    return { ok: false, error: unreadable('json', err) };
  }
}

/** Jinja, as a dbt model file holds it: `{{ ref('x') }}`, `{% if … %}`, `{# … #}`. */
const JINJA = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}|\{#[\s\S]*?#\}/;

export function isDbtTemplate(text: string): boolean {
  return JINJA.test(text);
}

function dbtTemplateError(fileName: string): ArtifactError {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  return {
    code: 'dbt_template',
    message: `${base} is a dbt model template; run \`gds plan --dbt <project>\`, or push its compiled SQL`,
    suggestion: `gds plan --dbt <project folder> governs every model of the project from target/manifest.json; or run dbt compile and push target/compiled/<project>/…/${base} (with --source <schema.table>).`,
  };
}

/** A parser failure that is not a syntax error (e.g. a grammar recursing too deep on pathological input). */
function unreadable(kind: ArtifactKind, err: unknown): ArtifactError {
  return {
    code: 'syntax_error',
    message: `the ${kind.toUpperCase()} file cannot be read: ${(err as Error)?.message ?? String(err)}`,
  };
}

/** `file:line:column: message`, the way compilers point at a problem. */
export function formatArtifactError(fileName: string, error: ArtifactError): string {
  const where =
    error.line === undefined
      ? fileName
      : `${fileName}:${error.line}${error.column === undefined ? '' : `:${error.column}`}`;
  return `${where}: ${error.message}`;
}
