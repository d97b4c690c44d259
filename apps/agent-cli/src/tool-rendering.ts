// Renders tools the way a model meets them: a signature such as
// `office_days(employee_id: string)` and the description, and counts the tokens they cost
// with a real tokenizer (OpenAI's o200k_base, via js-tiktoken).
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

export interface ToolView {
  name: string;
  description?: string | undefined;
  inputSchema: { properties?: Record<string, Record<string, unknown>>; required?: string[] };
}

let encoder: Tiktoken | undefined;

export function countTokens(text: string): number {
  encoder ??= new Tiktoken(o200k);
  return encoder.encode(text).length;
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

export function tokenReport(tools: ToolView[]) {
  const full = countTokens(JSON.stringify({ tools }));
  const brief = countTokens(tools.map((t) => `${t.name}: ${t.description ?? ''}`).join('\n'));
  return {
    tools: tools.length,
    fullListTokens: full,
    namesAndDescriptionsTokens: brief,
    ratio: Number((full / brief).toFixed(1)),
  };
}
