import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readUpstreamReport, UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { RunRecord } from '../src/run-record.js';
import { runAgent } from './support/run-agent.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const agent = runAgent;

const BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
/** Markup that runs script if it is ever put into the page as markup. */
const payload = (where: string) =>
  `<img src=x onerror="window.__ran=(window.__ran||[]).concat('${where}')">"'<script>window.__ran=['${where}']</script>`;

describe('agent report', () => {
  it('draws the waterfall of a real run, per layer, with the waits, in a real browser', async () => {
    const base = join(tmpdir(), `report-${randomBytes(4).toString('hex')}`);
    expect((await agent(['triage', '--via', 'all', '--faults', 'demo', '--ledger', `${base}.jsonl`])).code).toBe(0);
    expect((await agent(['report', `${base}.jsonl`, '--html', `${base}.html`])).code).toBe(0);
    const ledger = readFileSync(`${base}.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const drawable = ledger.filter((e) => e.kind === 'attempt' || e.kind === 'tool_call').length;

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(`${base}.html`).href);
      expect(await page.$$eval('section', (s) => s.map((x) => x.getAttribute('data-via')))).toEqual([
        'api',
        'mcp-stdio',
        'mcp-http',
      ]);
      expect(await page.locator('tr.row').count()).toBe(drawable);
      const layers = new Set(await page.$$eval('tr.row', (rows) => rows.map((r) => r.getAttribute('data-layer'))));
      expect(layers).toEqual(new Set(['api', 'mcp-stdio', 'mcp-http', 'gateway → upstream']));
      // The demo faults show: failed attempts in red, and hatched waits before the retries.
      expect(await page.locator('tr.row.error').count()).toBeGreaterThanOrEqual(9);
      expect(await page.locator('span.wait').count()).toBeGreaterThanOrEqual(9);
      const widths = await page.$$eval('span.bar', (bars) => bars.map((b) => b.getBoundingClientRect().width));
      expect(widths.every((w) => w >= 2)).toBe(true);
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('refuses a file that is not a ledger, saying which line', async () => {
    const file = join(tmpdir(), `not-a-ledger-${randomBytes(4).toString('hex')}.jsonl`);
    writeFileSync(file, '{"kind":"attempt"}\nhello\n');
    const { code, stderr } = await agent(['report', file, '--html', `${file}.html`]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/line 2 is not JSON/);
  });

  it('shows every string of a hostile ledger as text: no markup of it runs, in a real browser', async () => {
    const base = join(tmpdir(), `hostile-report-${randomBytes(4).toString('hex')}`);
    const time = new Date().toISOString();
    const lines = [
      { kind: 'tool_call', via: payload('via'), layer: payload('layer'), tool: payload('tool'), time, durationMs: 5 },
      {
        kind: 'attempt',
        layer: 'gateway',
        via: payload('via'),
        tool: payload('gateway tool'),
        attempt: 1,
        // A server's _meta may say anything: a string where a number belongs.
        status: payload('status'),
        errorType: payload('errorType'),
        waitMs: 3,
        waitReason: payload('waitReason'),
        durationMs: 4,
      },
      {
        kind: 'attempt',
        layer: payload('api layer'),
        via: 'api',
        method: payload('method'),
        route: payload('route'),
        attempt: 2,
        status: payload('api status'),
        errorType: null,
        time,
        waitMs: 1,
        waitReason: payload('api waitReason'),
        durationMs: 2,
        traceId: payload('traceId'),
        spanId: payload('spanId'),
      },
    ];
    writeFileSync(`${base}.jsonl`, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    expect((await agent(['report', `${base}.jsonl`, '--html', `${base}.html`])).code).toBe(0);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(`${base}.html`).href);
      await page.waitForLoadState('load');
      expect(await page.evaluate('window.__ran')).toBeUndefined();
      expect(await page.locator('img, script').count()).toBe(0);
      // Shown as the text it is; a status that is not a number is not shown as one.
      expect(await page.locator('td.label').allTextContents()).toEqual([
        `tool ${payload('tool')}`,
        `${payload('gateway tool')} attempt 1`,
        `${payload('method')} ${payload('route')} (attempt 2)`,
      ]);
      expect(await page.locator('td.status').allTextContents()).toEqual(['ok', payload('errorType'), '']);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it("records a server's upstream report only when it matches the schema, whole or not at all", async () => {
    const file = join(tmpdir(), `record-${randomBytes(4).toString('hex')}.jsonl`);
    const record = new RunRecord(file);
    const call = (upstream: unknown) => ({
      kind: 'tool_call' as const,
      layer: 'mcp-http',
      tool: 'x',
      time: new Date().toISOString(),
      durationMs: 1,
      isError: false,
      upstream: readUpstreamReport({ [UPSTREAM_REPORT_KEY]: upstream }) ?? null,
    });
    const attempt = { attempt: 1, status: 200, errorType: null, waitMs: 0, waitReason: null, durationMs: 3 };
    const report = {
      status: 200,
      attempts: 1,
      retries: 0,
      waitMs: 0,
      bytesSent: 10,
      bytesReceived: 20,
      durationMs: 3,
      requestIds: [],
      attemptLog: [{ ...attempt, bytesSent: 10, bytesReceived: 20 }],
    };
    // A stranger's fields of the wrong kinds: the report is dropped, nothing of it is recorded.
    record.toolCall(
      call({ ...report, attemptLog: [{ attempt: '1', status: '<b>', errorType: 7, waitMs: -5, waitReason: {} }] }),
      'mcp-http',
    );
    record.toolCall(call({ ...report, retries: -1 }), 'mcp-http');
    record.toolCall(call(report), 'mcp-http');
    await record.close();
    expect(record.entries.map((e) => e.kind)).toEqual(['tool_call', 'tool_call', 'tool_call', 'attempt']);
    expect(record.entries[0]).toMatchObject({ upstream: null });
    expect(record.entries[3]).toMatchObject({ ...attempt, layer: 'gateway', tool: 'x', via: 'mcp-http' });
  });
});
