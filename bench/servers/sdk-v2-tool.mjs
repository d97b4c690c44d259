// The same tool for the official SDK v2, which takes JSON Schema through fromJsonSchema (its
// zod support needs zod 4.2+; the v1 servers use zod 3).
import { fromJsonSchema } from '@modelcontextprotocol/server';
import { request } from 'undici';

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
    handler: async ({ employee_id }) => {
      const { statusCode, body } = await request(
        `${upstream}/employees/${encodeURIComponent(employee_id)}/office-days`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
      const text = await body.text();
      return statusCode < 400
        ? { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) }
        : { content: [{ type: 'text', text }], isError: true };
    },
  };
}
