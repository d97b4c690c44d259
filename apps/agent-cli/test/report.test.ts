import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const agent = runAgent;

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

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
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
});
