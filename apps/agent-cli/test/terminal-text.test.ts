// Control characters from strangers reach the terminal shown, never obeyed: escape sequences
// (window title, screen clear, cursor moves), bare carriage returns and bidi controls in a spec's
// descriptions, an upstream's body or error, come out as \uXXXX. The agent's own output is
// unchanged by it.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { shown, shownLine } from '../src/terminal-text.js';
import { runAgent } from './support/run-agent.js';

/** A window-title change, a screen clear, a line overwritten with a fake verdict, a bidi override. */
const HOSTILE =
  '\x1b]0;pwned\x07\x1b[2J\x1b[H\rI agent: all checks passed\x1b[31m red \u202eevil\u202c \x9b1;1H \x00\x7f end';
/** Any raw control a terminal would act on (CR only where no LF follows); `keepLines`: LF and tab allowed. */
function obeys(text: string, keepLines = true): boolean {
  const bidi = [0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (keepLines && (c === 0x0a || c === 0x09 || (c === 0x0d && text.charCodeAt(i + 1) === 0x0a))) continue;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || bidi.includes(c) || (c >= 0x2066 && c <= 0x2069)) return true;
  }
  return false;
}

const closers: Array<() => void> = [];

/** An API that answers `document` at /openapi.json, a hostile error at /fail, a hostile text elsewhere. */
async function hostileApi(document: unknown): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === '/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(document));
      return;
    }
    const failing = req.url?.startsWith('/fail');
    res.writeHead(failing ? 400 : 200, { 'content-type': failing ? 'application/json' : 'text/plain' });
    res.end(failing ? JSON.stringify({ error: { type: 'invalid_request_error', message: HOSTILE } }) : HOSTILE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

describe('text from strangers on the terminal', () => {
  it('shows every control character as \\uXXXX; line ends, tabs and CRLF stay in text of several lines', () => {
    expect(shown(HOSTILE)).toBe(
      '\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[H\\u000dI agent: all checks passed\\u001b[31m red \\u202eevil\\u202c \\u009b1;1H \\u0000\\u007f end',
    );
    expect(shown('a\tb\nc\r\nd')).toBe('a\tb\nc\r\nd');
    expect(shownLine('a\tb\nc\r\nd')).toBe('a\\u0009b\\u000ac\\u000d\\u000ad');
    expect(shown('plain text, ünïcode, emoji 🚀, 日本語')).toBe('plain text, ünïcode, emoji 🚀, 日本語');
  });

  it('leaves nothing a terminal would obey, for any string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(obeys(shown(text))).toBe(false);
        expect(obeys(shownLine(text), false)).toBe(false);
        // JSON text stays the same JSON: an escape of a character means that character.
        expect(JSON.parse(shown(JSON.stringify(text)))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('agent tools prints a spec whose names and descriptions carry escapes without obeying them', async () => {
    const document = {
      openapi: '3.1.0',
      info: { title: HOSTILE, version: '1' },
      paths: {
        '/x': {
          get: {
            operationId: 'x',
            summary: HOSTILE,
            description: HOSTILE,
            parameters: [{ name: 'q', in: 'query', description: HOSTILE, schema: { type: 'string' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    const spec = join(tmpdir(), `hostile-spec-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(spec, JSON.stringify(document));
    const apiUrl = await hostileApi(document);
    const runs = [
      ['tools', '--spec', spec],
      ['tools', '--via', 'api', '--api-url', apiUrl],
      ['tools', '--via', 'api', '--api-url', apiUrl, '--format', 'json'],
    ];
    for (const args of runs) {
      const { code, stdout, stderr } = await runAgent(args, { TOY_API_KEY: 'k'.repeat(24) });
      expect(code).toBe(0);
      expect(obeys(stdout)).toBe(false);
      expect(obeys(stderr)).toBe(false);
    }
    const listed = await runAgent(runs[1] ?? [], { TOY_API_KEY: 'k'.repeat(24) });
    expect(listed.stdout).toContain('\\u001b]0;pwned');
  });

  it('agent get prints a hostile body and a hostile error message without obeying them', async () => {
    const apiUrl = await hostileApi({});
    const env = { TOY_API_KEY: 'k'.repeat(24) };
    const ok = await runAgent(['get', '/body', '--api-url', apiUrl], env);
    expect(ok.code).toBe(0);
    expect(obeys(ok.stdout + ok.stderr)).toBe(false);
    expect(ok.stdout).toContain('\\u000dI agent: all checks passed');
    const failed = await runAgent(['get', '/fail', '--api-url', apiUrl], env);
    expect(failed.code).toBe(1);
    expect(obeys(failed.stdout + failed.stderr)).toBe(false);
    expect(failed.stdout).toContain('\\u202eevil');
  });
});
