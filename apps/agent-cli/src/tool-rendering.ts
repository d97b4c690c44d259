// Renders tools the way a model meets them: a signature such as
// `office_days(employee_id: string)` and the description. What they cost in tokens is counted
// by @agentwire/tool-tokens, the same counter the gateway uses.
import { tokenReport } from '@agentwire/tool-tokens';

export { tokenReport };

export interface ToolView {
  name: string;
  description?: string | undefined;
  inputSchema: { properties?: Record<string, Record<string, unknown>>; required?: string[] };
}

function typeOf(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v).replaceAll('"', "'")).join(' | ');
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (schema.type === 'array' && typeof schema.items === 'object' && schema.items) {
    return `${typeOf(schema.items as Record<string, unknown>)}[]`;
  }
  return typeof schema.type === 'string' ? schema.type : 'any';
}

export function signature(tool: ToolView): string {
  const required = new Set(tool.inputSchema.required ?? []);
  const params = Object.entries(tool.inputSchema.properties ?? {}).map(
    ([name, schema]) => `${name}${required.has(name) ? '' : '?'}: ${typeOf(schema)}`,
  );
  return `${tool.name}(${params.join(', ')})`;
}

export function renderTools(tools: ToolView[]): string {
  return tools.map((t) => `${signature(t)}\n    ${t.description ?? ''}`).join('\n\n');
}
