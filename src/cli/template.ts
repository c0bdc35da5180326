// --template: each JSON record formatted with a Mustache template (mustache.js), gds's counterpart of gh's
// Go templates. {{field}} and {{a.b}} print a value as it is (no HTML escaping; an object or array prints as
// compact JSON), {{#list}}…{{/list}} repeats for each item ({{.}} is the item) or shows when a value is set,
// {{^field}}…{{/field}} shows when it is not.
import { CliError, ExitCode } from '../core/errors.js';
import { ndjsonLine } from '../core/ndjson.js';

export type RecordTemplate = (record: object) => string;

/** A value as the template prints it: an object or array as JSON, written as NDJSON is (core/ndjson.ts). */
const asText = (value: unknown): string =>
  typeof value === 'object' && value !== null ? ndjsonLine(value) : String(value);

/** The template, checked now (a malformed one is exit 2 before anything is sent), as a function of a record. */
export async function compileTemplate(template: string): Promise<RecordTemplate> {
  // mustache: 2 ms of CPU at every start-up of every command if imported with this module.
  const { default: Mustache } = await import('mustache');
  try {
    Mustache.parse(template);
  } catch (error) {
    throw new CliError(`--template: ${(error as Error).message}.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_template',
      suggestion: "A Mustache template: --template '{{id}} {{name}}'; see `gds help formatting`.",
    });
  }
  return (record) => Mustache.render(template, record, {}, { escape: asText });
}
