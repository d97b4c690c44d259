// Start-up stays fast (BENCHMARKS.md, comparison 8) because code for what a run may never use
// loads when first used: prom-client with the first tool call or scrape, yaml with a config
// file, @opentelemetry/api with a tracer. This test records every module the gateway process
// loads (test/support/record-loads.mjs) and checks that initialize is answered without them.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GATEWAY_BIN, spawnGateway, startToyApi } from './support/stack.js';

const RECORDER = new URL('./support/record-loads.mjs', import.meta.url).href;
const LAZY = ['prom-client', 'yaml', '@opentelemetry/api', 'typebox'];

/** The lazy packages among the modules recorded so far. */
function lazyLoaded(file: string): string[] {
  const loaded = readFileSync(file, 'utf8');
  return LAZY.filter((name) => loaded.includes(`/node_modules/${name}/`));
}

describe('start-up', () => {
  it('answers initialize without loading metrics, YAML or tracing code; metrics load with the first tool call', async () => {
    const api = await startToyApi();
    const loads = join(mkdtempSync(join(tmpdir(), 'gateway-loads-')), 'loads.txt');
    const { child } = await spawnGateway(
      {
        UPSTREAM_URL: api.url,
        UPSTREAM_API_KEY: api.key,
        NODE_OPTIONS: `--import=${RECORDER}`,
        LOADS_FILE: loads,
      },
      ['--stdio'],
    );
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const ask = async (message: Record<string, unknown>) => {
      child.stdin!.write(`${JSON.stringify(message)}\n`);
      return JSON.parse((await lines.next()).value as string);
    };
    const init = await ask({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'start-up', version: '1' } },
    });
    expect(init.result.protocolVersion).toBe('2025-11-25');
    // The recorder saw the gateway's own modules load, and none of the lazy packages.
    expect(readFileSync(loads, 'utf8')).toContain(pathToFileURL(GATEWAY_BIN).href);
    expect(lazyLoaded(loads)).toEqual([]);
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const call = await ask({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
    });
    expect(call.result.isError).toBeFalsy();
    // The first call counts itself: the metrics registry exists now (prom-client brings
    // @opentelemetry/api along: one of its default metrics reads the active span). YAML stays
    // unloaded: there is no config file.
    const after = lazyLoaded(loads);
    expect(after).toContain('prom-client');
    expect(after).not.toContain('yaml');
  });
});
