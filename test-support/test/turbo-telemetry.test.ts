// turbo prints a telemetry notice on its first run, which would fill the first screen of
// `pnpm triage`. Every root script that runs turbo turns it off.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

describe("the repository's scripts", () => {
  it('run turbo only with its telemetry off', () => {
    const withTurbo = Object.entries(pkg.scripts).filter(([, command]) => /\bturbo\b/.test(command));
    expect(withTurbo.map(([name]) => name)).toEqual(expect.arrayContaining(['build', 'triage', 'bench']));
    for (const [name, command] of withTurbo) {
      for (const part of command.split('&&').filter((p) => /\bturbo\b/.test(p))) {
        expect(part.trim(), `script "${name}"`).toMatch(/^TURBO_TELEMETRY_DISABLED=1 turbo /);
      }
    }
    const entry = readFileSync(new URL('../../scripts/test.mjs', import.meta.url), 'utf8');
    expect(entry).toContain("TURBO_TELEMETRY_DISABLED: '1'");
  });
});
