#!/usr/bin/env node
// Runs a stdio MCP server and copies every JSON-RPC line that passes, both ways, to stderr,
// for `--trace`: `node stdio-tap.js <command> [args...]`. The server's own stderr is dropped,
// so stderr carries only the trace.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { printError } from './print.js';
import { shownLine } from './terminal-text.js';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  printError('usage: stdio-tap <command> [args...]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
createInterface({ input: process.stdin }).on('line', (line) => {
  printError(`mcp   -> ${shownLine(line)}\n`);
  child.stdin.write(`${line}\n`);
});
process.stdin.on('end', () => child.stdin.end());
createInterface({ input: child.stdout }).on('line', (line) => {
  printError(`mcp   <- ${shownLine(line)}\n`);
  process.stdout.write(`${line}\n`);
});
child.on('exit', (code) => process.exit(code ?? 0));
process.on('SIGTERM', () => child.kill('SIGTERM'));
