// Strict JSON Schema 2020-12 validation with our messages. Strict means no coercion:
// "2" is not an integer and neither is `true`. Compile once, validate many times.
import { createRequire } from 'node:module';
import type { Ajv2020, Options } from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';
import { linearRegExp } from './linear-pattern.js';
import { formatValidationErrors, MAX_REPORTED_PROBLEMS, unexpectedPropertyLine } from './validation-messages.js';

// Ajv takes about 110 ms to load; it is loaded on the first compile, not on import, so a
// program that never validates (or not yet: the gateway answering initialize) does not pay.
const require = createRequire(import.meta.url);
let ajvModules: { Ajv2020: typeof Ajv2020; addFormats: typeof addFormatsModule.default } | undefined;
function loadAjv() {
  ajvModules ??= {
    Ajv2020: (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020,
    // ajv-formats is CommonJS: its module object is the plugin itself.
    addFormats: require('ajv-formats') as typeof addFormatsModule.default,
  };
  return ajvModules;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };
export type Validate<T> = (data: unknown) => ValidationResult<T>;

export interface ValidatorOptions {
  /** Convert strings to the declared type: for query strings and path parameters only. */
  coerceTypes?: boolean;
  /** Fill in `default`s from the schema (default true). */
  useDefaults?: boolean;
  /**
   * Run every `pattern` on the linear-time engine (see linear-pattern.ts): for schemas from
   * documents we did not write. A pattern it cannot take makes compiling throw.
   */
  linearPatterns?: boolean;
}

/** An Ajv instance set up the way our messages need (allErrors, verbose, formats). */
export function createAjv(options: ValidatorOptions = {}, extra: Options = {}): Ajv2020 {
  const { Ajv2020, addFormats } = loadAjv();
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: false,
    coerceTypes: options.coerceTypes ?? false,
    useDefaults: options.useDefaults ?? true,
    ...(options.linearPatterns ? { code: { regExp: linearRegExp } } : {}),
    ...extra,
  });
  addFormats(ajv);
  return ajv;
}

let shared: Ajv2020 | undefined;

/**
 * Compiles a schema into a function that returns the value or the problems, one line each.
 * @example
 *   const check = compileValidator<ListEmailsQuery>(ListEmailsQuery);
 *   const r = check({ limit: 999 }); // { ok: false, errors: ['$.limit: 999 is above maximum 50'] }
 */
export function compileValidator<T>(schema: object, ajv?: Ajv2020): Validate<T> {
  // The shared instance is made on first use, so importing this module stays cheap.
  if (ajv === undefined && shared === undefined) shared = createAjv();
  const instance = ajv ?? (shared as Ajv2020);
  const validate = instance.compile(schema);
  const check: Validate<T> = (data) =>
    validate(data) ? { ok: true, value: data as T } : { ok: false, errors: formatValidationErrors(validate.errors) };
  const allowed = closedRoot(schema);
  if (!allowed) return check;
  return (data) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return check(data);
    const keys = Object.keys(data);
    let unknown = 0;
    for (const key of keys) if (!allowed.has(key)) unknown++;
    if (unknown <= MAX_REPORTED_PROBLEMS) return check(data);
    // Many unknown properties: Ajv would make (and we would describe) one error object each,
    // tens of thousands for one request. They are listed here up to the limit and counted past
    // it; the known properties are still checked, and their problems come first.
    const record = data as Record<string, unknown>;
    const known = Object.fromEntries(keys.filter((k) => allowed.has(k)).map((k) => [k, record[k]]));
    const checked = validate(known) ? [] : formatValidationErrors(validate.errors, Number.MAX_SAFE_INTEGER);
    const lines = checked.slice(0, MAX_REPORTED_PROBLEMS);
    for (const key of keys) {
      if (lines.length >= MAX_REPORTED_PROBLEMS) break;
      if (!allowed.has(key)) lines.push(unexpectedPropertyLine('', key, schema));
    }
    const more = checked.length + unknown - lines.length;
    if (more > 0) lines.push(`... and ${more} more`);
    return { ok: false, errors: lines };
  };
}

/** The property names a schema's root object allows, when it allows no others. */
function closedRoot(schema: object): Set<string> | undefined {
  const s = schema as { additionalProperties?: unknown; patternProperties?: unknown; properties?: object };
  if (s.additionalProperties !== false || s.patternProperties !== undefined) return undefined;
  return new Set(Object.keys(s.properties ?? {}));
}
