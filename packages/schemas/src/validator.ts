// Strict JSON Schema 2020-12 validation with our messages. Strict means no coercion:
// "2" is not an integer and neither is `true`. Compile once, validate many times.
import { createRequire } from 'node:module';
import type { Ajv2020, Options } from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';
import { linearRegExp } from './linear-pattern.js';
import { formatValidationErrors } from './validation-messages.js';

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
  return (data) =>
    validate(data) ? { ok: true, value: data as T } : { ok: false, errors: formatValidationErrors(validate.errors) };
}
