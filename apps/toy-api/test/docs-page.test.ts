import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startApi } from './support/toy-api.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('GET /docs', () => {
  it('shows an API reference that lists the operations, in a real browser', async () => {
    const api = await startApi('memory');
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
      await page.goto(`${api.url}/docs`);
      await page.waitForSelector('.opblock-summary-path', { timeout: 15_000 });
      const paths = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((n) => n.textContent?.trim()));
      expect(paths).toEqual(
        expect.arrayContaining(['/employees', '/emails', '/emails/{email_id}/reply', '/digest', '/flaky']),
      );
      const title = await page.textContent('.info .title');
      expect(title).toContain('Cardinal Energy toy API');
    } finally {
      await browser.close();
    }
  }, 60_000);
});
