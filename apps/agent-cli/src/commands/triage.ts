// `agent triage`: the ledgered task, run straight against the API and through the MCP gateway
// (stdio and Streamable HTTP), with faults, a deadline and a budget; it shows what each layer did.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HttpClient, isBudgetExceededError, isDeadlineExceededError, Ledger, RunBudget } from '@agentwire/http-client';
import { inSpan, type Tracing } from '@agentwire/telemetry';
import { externalStack, roleOf, type Stack, startEmbeddedStack } from '../embedded-stack.js';
import { EXIT } from '../exit-codes.js';
import { faultConfig, installFaults } from '../faults.js';
import { print, printError } from '../print.js';
import { plainOutput, type StepOutput, terminalOutput } from '../progress-output.js';
import { RunRecord } from '../run-record.js';
import { shownLine } from '../terminal-text.js';
import { tokenReport } from '../tool-rendering.js';
import { ApiBackend } from '../triage/api-backend.js';
import { isRefusal, type TriageBackend } from '../triage/backend.js';
import { McpBackend } from '../triage/mcp-backend.js';
import { renderSummary, summaryRows } from '../triage/summary.js';
import { runTriage, TRIAGE_DATE } from '../triage/task.js';
import { UsageError } from '../usage-error.js';
import { describeHttp } from '../wire-trace.js';
import { gatewayAuth } from './command-args.js';

const MODES = ['api', 'mcp-stdio', 'mcp-http'] as const;
type Mode = (typeof MODES)[number];

function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) throw new UsageError(`--deadline must look like 20s, 1500ms or 2m, got '${text}'`);
  const n = Number(match[1]);
  return Math.round(match[2] === 'ms' ? n : match[2] === 'm' ? n * 60_000 : n * 1000);
}

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number of at least 1, got '${text}'`);
  return n;
}

export interface TriageDeps {
  /** Tracing for this run (main.ts starts it from OTEL_*; a test gives its in-memory exporter). */
  tracing?: Tracing | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** `agent triage`: the task on each path asked for, a ledger line per attempt, a summary table. */
export async function triageCommand(argv: string[], deps: TriageDeps = {}): Promise<number> {
  const env = deps.env ?? process.env;
  const tracer = deps.tracing?.tracer('agentwire.agent');
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      date: { type: 'string', default: TRIAGE_DATE },
      via: { type: 'string' },
      faults: { type: 'string', default: 'none' },
      'api-url': { type: 'string' },
      'mcp-url': { type: 'string' },
      'sign-in': { type: 'string' },
      deadline: { type: 'string' },
      'max-requests': { type: 'string' },
      'max-bytes': { type: 'string' },
      ledger: { type: 'string' },
      json: { type: 'boolean', default: false },
      trace: { type: 'boolean', default: false },
      'mcp-mode': { type: 'string', default: 'auto' },
      as: { type: 'string' },
    },
  });
  const mcpMode = values['mcp-mode'];
  if (mcpMode !== 'auto' && mcpMode !== 'legacy')
    throw new UsageError(`--mcp-mode must be auto or legacy, got '${mcpMode}'`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(values.date ?? ''))
    throw new UsageError(`--date must be YYYY-MM-DD, got '${values.date}'`);
  // AGENTWIRE_VIA sets the default (the compose file's agent service runs every path).
  const via = values.via ?? (env.AGENTWIRE_VIA || 'api');
  if (via !== 'all' && !(MODES as readonly string[]).includes(via)) {
    const source = values.via === undefined ? 'AGENTWIRE_VIA' : '--via';
    throw new UsageError(`${source} must be one of api, mcp-stdio, mcp-http, all; got '${via}'`);
  }
  const modes: Mode[] = via === 'all' ? [...MODES] : [via as Mode];
  const deadlineMs = values.deadline ? parseDuration(values.deadline) : undefined;
  const maxRequests = positive('--max-requests', values['max-requests']);
  const maxBytes = positive('--max-bytes', values['max-bytes']);
  const faults = await faultConfig(values.faults ?? 'none').catch((error: Error) => {
    throw new UsageError(error.message);
  });
  const apiUrl = values['api-url'] ?? env.AGENTWIRE_API_URL;
  const mcpUrl = values['mcp-url'] ?? env.AGENTWIRE_MCP_URL;
  // A running gateway alone is not a stack triage can run on (its api path needs the API): said,
  // where before the gateway was passed over for an embedded stack.
  if (mcpUrl && !apiUrl) {
    const named = values['mcp-url'] ? '--mcp-url' : 'AGENTWIRE_MCP_URL';
    throw new UsageError(
      `${named} names a running gateway; triage runs on a running stack with its API too: give --api-url (or AGENTWIRE_API_URL), or neither for the embedded stack`,
    );
  }

  const started = Date.now();
  const deadline = deadlineMs === undefined ? undefined : started + deadlineMs;
  const budget = maxRequests || maxBytes ? new RunBudget({ maxAttempts: maxRequests, maxBytes }) : undefined;
  const ledgerPath =
    values.ledger ??
    join(tmpdir(), 'agentwire', `triage-${new Date(started).toISOString().replace(/[:.]/g, '-')}.jsonl`);
  const record = new RunRecord(ledgerPath);

  // The embedded stack signs in a demo user: the manager unless --as (or AGENTWIRE_AS) says
  // otherwise; MCP_GATEWAY_AUTH=token runs it with the shared keys instead.
  const as =
    roleOf(values.as) ??
    roleOf(env.AGENTWIRE_AS, 'AGENTWIRE_AS') ??
    (env.MCP_GATEWAY_AUTH === 'token' ? undefined : 'manager');
  if (values.as && apiUrl) {
    throw new UsageError(
      '--as signs in a demo user of the embedded stack; a running stack (--api-url) uses its own keys',
    );
  }
  const stack: Stack = apiUrl
    ? externalStack(apiUrl, mcpUrl, env)
    : await startEmbeddedStack(env, { tracing: deps.tracing, as });
  if (!stack.embedded && modes.includes('mcp-http') && !stack.mcpUrl) {
    throw new UsageError('--via mcp-http against a running stack needs --mcp-url (or AGENTWIRE_MCP_URL)');
  }
  // --json: nothing but one JSON document at the end, for scripts. On a terminal, a spinner
  // shows a step at work; piped, plain lines.
  const quiet = values.json === true;
  const out: StepOutput = quiet
    ? { step: () => undefined, stream: () => undefined, done: () => undefined }
    : process.stdout.isTTY
      ? terminalOutput(process.stdout)
      : plainOutput(process.stdout);
  const toolTokens = new Map<Mode, number>();
  // --trace: the wire on stderr. HTTP attempts as request lines and outcomes (no headers, so
  // no keys); each tools/call and its result (they carry no credentials: those are HTTP headers).
  const trace = values.trace === true;
  let stoppedBy: string | undefined;
  const walls = new Map<Mode, number>();
  let exit: number = EXIT.ok;
  let traceId: string | undefined;
  record.subject = stack.user?.id;
  if (stack.user) {
    const { id, name, role, scopes } = stack.user;
    out.step(`signed in as ${id} (${name}, ${role}): ${scopes.join(' ')}`);
  }
  try {
    // One trace for the run: a span per path, per step, per tool call and per HTTP attempt.
    await inSpan(tracer, 'agent triage', { 'agentwire.via': via }, async (run) => {
      traceId = run?.spanContext().traceId;
      for (const mode of modes) {
        out.step(`\n== triage via ${mode} ==`);
        if (stack.embedded) await installFaults(stack.apiUrl, stack.apiKey, faults);
        else if (values.faults !== 'none') out.step('(faults are only installed in the embedded stack)');
        const ledger = new Ledger();
        record.follow(ledger, mode);
        if (values.trace) ledger.on('entry', (e) => printError(`${describeHttp(e)}\n`));
        const common = { ledger, ...(budget ? { budget } : {}), ...(deadline ? { deadline } : {}) };
        const modeStart = Date.now();
        let backend: TriageBackend | undefined;
        let closeAuth: (() => void) | undefined;
        try {
          await inSpan(tracer, `triage via ${mode}`, { 'agentwire.via': mode }, async () => {
            if (mode === 'api') {
              // As the signed-in user (their token for the API), or with the API key.
              const key = stack.user?.apiToken ?? stack.apiKey;
              backend = new ApiBackend(
                new HttpClient({ baseUrl: stack.apiUrl, auth: { key }, layer: 'api', tracer, ...common }),
              );
            } else if (mode === 'mcp-http') {
              const http = new HttpClient({ baseUrl: stack.mcpUrl, layer: 'mcp-http', tracer, ...common });
              const auth = await gatewayAuth(stack, values['sign-in']);
              closeAuth = auth.close;
              backend = await McpBackend.http({
                url: stack.mcpUrl,
                token: auth.token,
                authProvider: auth.authProvider,
                http,
                record: (r) => record.toolCall(r, mode),
                deadline,
                trace,
                tracer,
                mode: mcpMode,
              });
            } else {
              backend = await McpBackend.stdio({
                spawn: stack.stdio,
                record: (r) => record.toolCall(r, mode),
                deadline,
                budget,
                trace,
                tracer,
              });
            }
            if (backend instanceof McpBackend) {
              // What a model would be sent with every step: the tools' descriptions.
              toolTokens.set(mode, tokenReport(await backend.listTools()).fullListTokens);
            }
            const outcome = await runTriage(backend, values.date ?? TRIAGE_DATE, out, tracer);
            walls.set(mode, Date.now() - modeStart);
            out.step(
              `   done: ${outcome.emails.length} emails, ${outcome.senders.length} senders, reply ${outcome.reply.id}`,
            );
          });
        } catch (error) {
          walls.set(mode, Date.now() - modeStart);
          if (isRefusal(error)) {
            // Not a failure of the path: the user may not do this. The next path is asked too.
            exit = exit === EXIT.ok ? EXIT.refused : exit;
            stoppedBy = `refused: ${(error as Error).message}`;
            out.step(`   refused: ${(error as Error).message}`);
            continue;
          }
          exit = exitCodeFor(error, deadline);
          stoppedBy = (error as Error).message;
          out.step(`\n   stopped: ${stoppedBy}`);
          break;
        } finally {
          await backend?.close().catch(() => undefined);
          closeAuth?.();
        }
      }
    });
  } finally {
    out.done();
    await stack.close();
    await record.close();
  }
  const rows = summaryRows(record, [...walls.keys()], walls, toolTokens);
  if (quiet) {
    print(
      `${JSON.stringify({ exitCode: exit, stoppedBy: stoppedBy ?? null, ledger: ledgerPath, traceId: traceId ?? null, summary: rows })}\n`,
    );
  } else {
    print('\n');
    print(`${renderSummary(rows)}\n`);
    if (stoppedBy) print(`stopped (exit ${exit}): ${shownLine(stoppedBy)}\n`);
    print(`ledger: ${ledgerPath}\n`);
    if (traceId) print(`trace: ${traceId}\n`);
  }
  return exit;
}

function exitCodeFor(error: unknown, deadline: number | undefined): number {
  const cause = (error as { cause?: unknown }).cause;
  if (isBudgetExceededError(error) || isBudgetExceededError(cause)) return EXIT.budget;
  if (isDeadlineExceededError(error) || isDeadlineExceededError(cause)) return EXIT.deadline;
  if (deadline !== undefined && Date.now() >= deadline) return EXIT.deadline;
  return EXIT.taskFailed;
}
