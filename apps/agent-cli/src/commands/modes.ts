// `agent tools --spec FILE|URL`: what the gateway would serve for a spec in each mode.
import {
  createGateway,
  DEFAULT_TOOLS_TOKEN_BUDGET,
  describeTool,
  LATEST_LEGACY,
  parseSelectors,
  SelectionError,
  type ToolsMode,
} from '@agentwire/mcp-gateway';
import { EXIT } from '../exit-codes.js';
import { print } from '../print.js';
import { renderTable } from '../text-table.js';
import { type ToolView, tokenReport } from '../tool-rendering.js';
import { UsageError } from '../usage-error.js';

/**
 * `agent tools --spec FILE|URL`: what the gateway would serve for a spec in each mode, side by
 * side (tools listed, tokens of the whole list, tokens of names and descriptions alone), with
 * the same selection rules and budget as the gateway's. Nothing is called: the spec is enough.
 */
export async function modesCommand(
  spec: string,
  values: { include?: string; exclude?: string; 'read-only'?: boolean; budget?: string; format?: string },
): Promise<number> {
  let selection: {
    include: ReturnType<typeof parseSelectors>;
    exclude: ReturnType<typeof parseSelectors>;
    readOnly: boolean;
  };
  try {
    selection = {
      include: parseSelectors(values.include, '--include'),
      exclude: parseSelectors(values.exclude, '--exclude'),
      readOnly: values['read-only'] === true,
    };
  } catch (error) {
    if (error instanceof SelectionError) throw new UsageError(error.message);
    throw error;
  }
  const budget = Number(values.budget ?? DEFAULT_TOOLS_TOKEN_BUDGET);
  if (!Number.isInteger(budget) || budget < 100)
    throw new UsageError(`--budget must be an integer of at least 100 tokens, got '${values.budget}'`);
  const rows: Array<{
    mode: ToolsMode | 'auto';
    listed: number;
    operations: number;
    fullListTokens: number;
    namesAndDescriptionsTokens: number;
    chose?: ToolsMode | 'mixed';
    why?: string;
  }> = [];
  let summary = '';
  for (const mode of ['static', 'dynamic', 'auto'] as const) {
    let gateway: Awaited<ReturnType<typeof createGateway>>;
    try {
      // No call is made: the upstream URL only has to be a URL.
      gateway = await createGateway({
        upstreamUrl: 'http://127.0.0.1:9',
        openapi: spec,
        selection,
        toolsMode: mode,
        toolsTokenBudget: budget,
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'SpecLoadError' || name === 'SpecError' || name === 'SelectionError') {
        throw new UsageError(`--spec ${spec}: ${(error as Error).message}`);
      }
      throw error;
    }
    summary = gateway.selection.summary;
    if (mode === 'auto') {
      rows.push({
        ...(rows.find((r) => r.mode === gateway.toolsMode.mode) as (typeof rows)[number]),
        mode,
        chose: gateway.toolsMode.mode,
        why: gateway.toolsMode.why,
      });
    } else {
      const listed = gateway.tools.listed.map((t) => describeTool(t, LATEST_LEGACY)) as unknown as ToolView[];
      const report = tokenReport(listed);
      rows.push({
        mode,
        listed: listed.length,
        operations: gateway.tools.tools.length,
        fullListTokens: report.fullListTokens,
        namesAndDescriptionsTokens: report.namesAndDescriptionsTokens,
      });
    }
    await gateway.close();
  }
  if (values.format === 'json') {
    print(`${JSON.stringify({ spec, selection: summary, budget, modes: rows }, null, 2)}\n`);
    return EXIT.ok;
  }
  print(`${spec}: ${summary}\n\n`);
  print(
    `${renderTable(
      [
        { title: 'mode' },
        { title: 'tools\nlisted', align: 'right' },
        { title: 'operations\nreachable', align: 'right' },
        { title: 'tokens\nfull list', align: 'right' },
        { title: 'tokens names\n+ descriptions', align: 'right' },
      ],
      rows.map((r) => [
        r.mode === 'auto' ? `auto: ${r.chose}` : r.mode,
        r.listed,
        r.operations,
        r.fullListTokens,
        r.namesAndDescriptionsTokens,
      ]),
    )}\n`,
  );
  print(
    `\n${rows.find((r) => r.mode === 'auto')?.why} (TOOLS_MODE=auto, the default). Tokens: o200k_base, of the list as the 2025-11-25 revision shows it.\n`,
  );
  return EXIT.ok;
}
