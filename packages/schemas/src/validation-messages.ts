// Turns JSON Schema validation errors (Ajv's) into one line per problem that a model can act
// on: where ($.path), what was wrong, and what is allowed.
//   $.team: must be one of ['firmware', 'analytics', 'legal'], got 'sales'
import type { ErrorObject } from 'ajv';

const FORMAT_HINTS: Readonly<Record<string, string>> = {
  date: 'a date as YYYY-MM-DD',
  'date-time': 'a date-time as in RFC 3339, e.g. 2026-06-10T09:30:00Z',
  time: 'a time as HH:MM:SS',
  email: 'an email address',
  uri: 'an absolute URI',
  uuid: 'a UUID',
};

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Converts an Ajv instancePath (a JSON Pointer) into `$.a[0].b`. */
export function jsonPath(pointer: string): string {
  if (pointer === '') return '$';
  let out = '$';
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^\d+$/.test(key)) out += `[${key}]`;
    else if (IDENTIFIER.test(key)) out += `.${key}`;
    else out += `[${quote(key)}]`;
  }
  return out;
}

/** Names a JSON value's type the way JSON Schema does. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return `'${short.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** A value as it appears in a message: strings quoted and shortened, containers by type. */
export function show(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return `an ${jsonType(value)}`;
}

function list(values: readonly unknown[]): string {
  return `[${values.map(show).join(', ')}]`;
}

function expectedTypes(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  return types.join(' or ');
}

function allowedProperties(parentSchema: unknown): string {
  const props = (parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  const names = props ? Object.keys(props) : [];
  return names.length === 0 ? 'none' : list(names);
}

/** The line for one property a closed object does not allow, as formatValidationErrors writes it. */
export function unexpectedPropertyLine(pointer: string, name: string, parentSchema: unknown): string {
  const line = `${jsonPath(pointer)}: unexpected property ${quote(name)} (allowed: ${allowedProperties(parentSchema)})`;
  return line.length > MAX_LINE_LENGTH ? `${line.slice(0, MAX_LINE_LENGTH - 3)}...` : line;
}

function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  const data: unknown = error.data;
  switch (error.keyword) {
    case 'required':
      return `missing required property ${quote(String(p.missingProperty))}`;
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = String(p.additionalProperty ?? p.unevaluatedProperty);
      return `unexpected property ${quote(name)} (allowed: ${allowedProperties(error.parentSchema)})`;
    }
    case 'enum':
      return `must be one of ${list(p.allowedValues as unknown[])}, got ${show(data)}`;
    case 'const':
      return `must be ${show(p.allowedValue)}, got ${show(data)}`;
    case 'type': {
      const got = jsonType(data);
      return `expected ${expectedTypes(p.type)}, got ${got === 'number' ? `number ${String(data)}` : got}`;
    }
    case 'maximum':
      return `${show(data)} is above maximum ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `${show(data)} must be below ${String(p.limit)}`;
    case 'minimum':
      return `${show(data)} is below minimum ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `${show(data)} must be above ${String(p.limit)}`;
    case 'multipleOf':
      return `${show(data)} is not a multiple of ${String(p.multipleOf)}`;
    case 'maxLength':
      return `is ${String((data as string).length)} characters long, longer than maxLength ${String(p.limit)}`;
    case 'minLength':
      return `is ${String((data as string).length)} characters long, shorter than minLength ${String(p.limit)}`;
    case 'pattern':
      return `${show(data)} does not match pattern ${String(p.pattern)}`;
    case 'format': {
      const hint = FORMAT_HINTS[String(p.format)] ?? `format ${String(p.format)}`;
      return `${show(data)} is not ${hint}`;
    }
    case 'maxItems':
      return `has ${String((data as unknown[]).length)} items, more than maxItems ${String(p.limit)}`;
    case 'minItems':
      return `has ${String((data as unknown[]).length)} items, fewer than minItems ${String(p.limit)}`;
    case 'uniqueItems':
      return `items ${String(p.j)} and ${String(p.i)} are the same; items must be unique`;
    case 'maxProperties':
      return `has more than ${String(p.limit)} properties`;
    case 'minProperties':
      return `has fewer than ${String(p.limit)} properties`;
    case 'anyOf':
    case 'oneOf': {
      const branches = Array.isArray(error.schema) ? (error.schema as unknown[]) : [];
      const shapes = branches.map(describeSchema);
      const rule = error.keyword === 'oneOf' && p.passingSchemas ? 'exactly one of' : 'one of';
      return `must be ${rule}: ${shapes.join('; ')}; got ${show(data)}`;
    }
    default:
      return error.message ?? `fails ${error.keyword}`;
  }
}

function describeSchema(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return 'anything';
  const s = schema as Record<string, unknown>;
  if ('const' in s) return show(s.const);
  if (Array.isArray(s.enum)) return `one of ${list(s.enum)}`;
  if (s.type !== undefined) return expectedTypes(s.type);
  return 'a value of another shape';
}

/** At most this many problem lines are reported; the rest are counted in one last line. */
export const MAX_REPORTED_PROBLEMS = 20;
/** A problem line longer than this (a long allowed list, a deep path) is cut. */
const MAX_LINE_LENGTH = 400;

/**
 * One line per problem, `$.path: reason`. Errors inside a failed `anyOf`/`oneOf` are folded
 * into that one line, so the model sees the alternatives instead of every branch's complaint.
 * At most `max` lines, then `... and N more`: ten thousand unknown properties cost linear work
 * and a short answer. Requires an Ajv compiled with `allErrors` and `verbose` (for the values
 * and allowed lists).
 */
export function formatValidationErrors(
  errors: readonly ErrorObject[] | null | undefined,
  max = MAX_REPORTED_PROBLEMS,
): string[] {
  if (!errors || errors.length === 0) return [];
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.schemaPath));
  const seen = new Set<string>();
  const lines: string[] = [];
  let more = 0;
  for (const error of errors) {
    if (unions.size > 0 && insideUnion(error.schemaPath, unions)) continue;
    let line = `${jsonPath(error.instancePath)}: ${describe(error)}`;
    if (line.length > MAX_LINE_LENGTH) line = `${line.slice(0, MAX_LINE_LENGTH - 3)}...`;
    if (seen.has(line)) continue;
    seen.add(line);
    if (lines.length < max) lines.push(line);
    else more++;
  }
  if (more > 0) lines.push(`... and ${more} more`);
  return lines;
}

/** Whether a schema path lies below one of the failed unions (`#/.../anyOf` then `/n/...`). */
function insideUnion(schemaPath: string, unions: ReadonlySet<string>): boolean {
  for (let i = schemaPath.indexOf('/'); i !== -1; i = schemaPath.indexOf('/', i + 1)) {
    if (unions.has(schemaPath.slice(0, i))) return true;
  }
  return false;
}
