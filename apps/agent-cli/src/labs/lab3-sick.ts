// Lab 3, demo 13: a sick upstream (issue 40's resilience on the embedded stack): a circuit
// breaker opening and closing, and a hedge cutting a stalled read.
import { HttpClient, isHttpClientError, Ledger } from '@agentwire/http-client';
import type { Stack } from '../embedded-stack.js';
import { installFaults } from '../faults.js';
import type { LabReport } from './lab-report.js';

/** The breaker through its states, and a stalled read with and without a hedge. */
export async function sickUpstream(stack: Stack, report: LabReport): Promise<void> {
  // The breaker: 10 failing calls open it (half of at least 10 failed); two calls are refused
  // without being sent; after the break one probe goes, succeeds, and closes it.
  const breakMs = 300;
  const ledger = new Ledger();
  // The breaker's changes as it reports them (a refusal reports the same state twice: not a change).
  const changes: string[] = [];
  const guarded = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger,
    maxRetries: 0,
    retryBudget: false,
    breaker: {
      failureRatio: 0.5,
      minimumThroughput: 10,
      breakDurationMs: breakMs,
      onStateChange: (_key, { from, to }) => {
        if (from !== to) changes.push(`${from} -> ${to}`);
      },
    },
  });
  await installFaults(stack.apiUrl, stack.apiKey, {
    rules: [{ method: 'GET', path: '/employees/{employee_id}', action: 'status', status: 503, times: 10 }],
  });
  const outcomes: string[] = [];
  const once = async () => {
    const before = changes.length;
    try {
      await guarded.get('/employees/e-05');
      outcomes.push(changes.length > before ? '200, the probe: closed' : '200');
    } catch (error) {
      outcomes.push(
        isHttpClientError(error) && error.type === 'circuit_open'
          ? 'refused at once, not sent'
          : `${(error as { status?: number }).status} sent, failed`,
      );
    }
  };
  for (let i = 0; i < 12; i++) await once();
  await new Promise((resolve) => setTimeout(resolve, breakMs));
  for (let i = 0; i < 2; i++) await once();
  await installFaults(stack.apiUrl, stack.apiKey, { rules: [] });
  await guarded.close();
  // Consecutive calls with the same outcome on one row.
  const rows: Array<[string, string]> = [];
  outcomes.forEach((outcome, i) => {
    const last = rows.at(-1);
    const [from] = (last?.[0] ?? '').split('-');
    if (last && last[1] === outcome) last[0] = `${from}-${i + 1}`;
    else rows.push([String(i + 1), outcome]);
  });
  report.table(['calls', 'what happened'], rows);
  report.note(
    `The breaker went ${changes.join(', then ')} (upstream requests: ${ledger.attempts.length} of ${outcomes.length} calls). Only 5xx, timeouts and broken connections count; after the ${breakMs} ms break one probe decided.`,
  );

  // The hedge: the first read stalls for 1.5 s; a hedge sent after 100 ms answers instead.
  const stalled = async (hedge: boolean) => {
    await installFaults(stack.apiUrl, stack.apiKey, {
      rules: [{ method: 'GET', path: '/employees/{employee_id}', action: 'delay', delay_ms: 1500, times: 1 }],
    });
    const hedgeLedger = new Ledger();
    const client = new HttpClient({
      baseUrl: stack.apiUrl,
      auth: { key: stack.apiKey },
      ledger: hedgeLedger,
      ...(hedge ? { hedge: { delayMs: 100 } } : {}),
    });
    const started = performance.now();
    await client.get('/employees/e-05');
    const ms = Math.round(performance.now() - started);
    await client.close();
    return { ms, attempts: hedgeLedger.attempts };
  };
  const plain = await stalled(false);
  const hedged = await stalled(true);
  await installFaults(stack.apiUrl, stack.apiKey, { rules: [] });
  report.table(
    ['one read, the first answer stalled 1.5 s', 'requests', 'answered after'],
    [
      ['without a hedge', plain.attempts.length, `${(plain.ms / 1000).toFixed(1)} s`],
      [
        'a hedge after 100 ms',
        hedged.attempts.length,
        `${(hedged.ms / 1000).toFixed(1)} s (${hedged.attempts.find((a) => a.errorType === 'hedge_lost') ? 'the stalled one aborted' : '?'})`,
      ],
    ],
  );
  report.note(
    'A read that has not answered after a delay gets a second attempt; the first answer wins and the other is aborted. With a percentile (hedge: { percentile: 95 }) only the slowest few percent are hedged, and none while the retry budget holds retries back.',
  );
}
