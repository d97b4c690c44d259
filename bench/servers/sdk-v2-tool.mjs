// The same tool for the official SDK v2, which takes JSON Schema through fromJsonSchema (its
// zod support needs zod 4.2+; the v1 servers use zod 3).
import { fromJsonSchema } from '@modelcontextprotocol/server';
import { officeDaysHandler } from './sdk-tool.mjs';

export function officeDaysToolV2(upstream, key) {
  return {
    name: 'office_days',
    config: {
      description: "An employee's office days.",
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { employee_id: { type: 'string', pattern: '^e-\\d{2}$' } },
        required: ['employee_id'],
      }),
    },
    handler: officeDaysHandler(upstream, key),
  };
}
