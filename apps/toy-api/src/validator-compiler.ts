// Fastify validates with our Ajv setup so that its 400s carry the same one-line-per-problem
// messages as the gateway. Query strings and path parameters arrive as text and are coerced;
// JSON bodies are not ("2" is not an integer there).
import { createAjv, formatValidationErrors } from '@agentwire/schemas';
import type { FastifySchemaCompiler } from 'fastify';

export function createValidatorCompiler(): FastifySchemaCompiler<object> {
  const textual = createAjv({ coerceTypes: true });
  const json = createAjv({ coerceTypes: false });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? json : textual;
    const validate = ajv.compile(schema);
    return (data: unknown) => {
      if (validate(data)) return { value: data };
      const error = new Error(formatValidationErrors(validate.errors).join('\n')) as Error & { validation: unknown };
      error.validation = validate.errors;
      return { error };
    };
  };
}
