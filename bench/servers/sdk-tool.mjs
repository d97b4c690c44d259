// The one tool the SDK servers serve, doing what the gateway's `office_days` does: validate the
// argument, GET the upstream route with undici, return the JSON as text and structuredContent.
import { request } from 'undici';
import { z } from 'zod';

/** The tool's work, the same for both SDKs: the upstream GET, its JSON as text and structuredContent. */
export function officeDaysHandler(upstream, key) {
  return async ({ employee_id }) => {
    const { statusCode, body } = await request(`${upstream}/employees/${encodeURIComponent(employee_id)}/office-days`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const text = await body.text();
    return statusCode < 400
      ? { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) }
      : { content: [{ type: 'text', text }], isError: true };
  };
}

export function officeDaysTool(upstream, key) {
  return {
    name: 'office_days',
    config: {
      description: "An employee's office days.",
      inputSchema: { employee_id: z.string().regex(/^e-\d{2}$/) },
    },
    handler: officeDaysHandler(upstream, key),
  };
}
