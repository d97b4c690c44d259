// The config file of several upstreams: what it accepts, and that every mistake is reported
// with the file, the line and the field, in words that say what to write instead.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUpstreamsConfig } from '../src/upstream/config-file.js';

let n = 0;
function configFile(text: string): string {
  const file = join(tmpdir(), `agentwire-upstreams-${process.pid}-${n++}.yaml`);
  writeFileSync(file, text);
  return file;
}
const env = { GITHUB_TOKEN: 'ghp-0123456789abcdef', TOY_API_KEY: 'toy-0123456789abcdef' };

describe('the upstreams config file', () => {
  it('reads upstreams with their auth, selection and defaults; a relative spec is read from beside the file', () => {
    const file = configFile(`upstreams:
  - name: github
    url: https://api.github.com/
    spec: ./github.json
    auth: { scheme: bearer, keyEnv: GITHUB_TOKEN }
    include: [tag:issues]
    readOnly: true
    deadlineMs: 20000
    maxRetries: 1
    mode: dynamic
    outputSchemas: off
  - name: toy
    url: http://127.0.0.1:8080
    auth: { keyEnv: TOY_API_KEY }
    outputSchemas: unlisted
`);
    const [github, toy] = readUpstreamsConfig(file, env);
    expect(github).toMatchObject({
      name: 'github',
      url: 'https://api.github.com',
      spec: join(tmpdir(), 'github.json'),
      apiKey: env.GITHUB_TOKEN,
      auth: { type: 'bearer' },
      deadlineMs: 20_000,
      maxRetries: 1,
      mode: 'dynamic',
      outputSchemas: false,
    });
    expect(github?.selection.include.map((s) => s.text)).toEqual(['tag:issues']);
    expect(github?.selection.readOnly).toBe(true);
    expect(toy).toMatchObject({
      name: 'toy',
      spec: undefined,
      apiKey: env.TOY_API_KEY,
      auth: undefined,
      outputSchemas: 'unlisted',
    });
    // JSON is YAML.
    const json = configFile(JSON.stringify({ upstreams: [{ name: 'toy', url: 'http://127.0.0.1:8080' }] }));
    expect(readUpstreamsConfig(json, env)).toHaveLength(1);
  });

  it('names the file, the line and the field of each mistake, and says what is allowed', () => {
    const cases: Array<[string, RegExp]> = [
      [
        'upstreams:\n  - name: toy\n    url: http://127.0.0.1:8080\n    key: abc\n',
        /:4 upstreams\[0\]\.key: keys never go in the file: put the key in an environment variable and name it in auth\.keyEnv$/,
      ],
      [
        'upstreams:\n  - name: toy\n    url: http://127.0.0.1:8080\n    retries: 3\n',
        /:4 upstreams\[0\]\.retries: unknown field; allowed: name, url, spec, auth, include, exclude, readOnly, mode, outputSchemas, deadlineMs, timeoutMs, maxRetries/,
      ],
      [
        'upstreams:\n  - name: my api\n    url: http://x\n',
        /:2 upstreams\[0\]\.name: a name is 1 to 20 letters, digits, _ or -/,
      ],
      [
        'upstreams:\n  - name: gh\n    url: https://api.github.com\n    auth:\n      keyEnv: NOT_SET_HERE_TOKEN\n',
        /:5 upstreams\[0\]\.auth\.keyEnv: NOT_SET_HERE_TOKEN is not set in the environment$/,
      ],
      [
        // A config may not send the gateway's own secrets upstream, nor any variable not marked as a key.
        'upstreams:\n  - name: gh\n    url: https://api.github.com\n    auth:\n      keyEnv: MCP_GATEWAY_TOKEN\n',
        /:5 upstreams\[0\]\.auth\.keyEnv: MCP_GATEWAY_TOKEN is one of the gateway's own secrets and is never sent upstream/,
      ],
      [
        'upstreams:\n  - name: gh\n    url: https://api.github.com\n    auth:\n      keyEnv: HOME\n',
        /:5 upstreams\[0\]\.auth\.keyEnv: HOME is not marked as an upstream key: UPSTREAM_KEY_ENVS \(\*_KEY,\*_TOKEN,\*_PAT,\*_CLIENT_SECRET\) names the variables/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n  - name: a\n    url: http://y\n',
        /:4 upstreams\[1\]\.name: 'a' names two upstreams/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    auth: { scheme: header }\n',
        /:4 upstreams\[0\]\.auth: scheme header needs a name/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    auth: { scheme: digest }\n',
        /:4 upstreams\[0\]\.auth\.scheme: must be equal to one of the allowed values \(\["spec","bearer","basic","header","query"\]\)/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    outputSchemas: no\n',
        /:4 upstreams\[0\]\.outputSchemas: must be equal to one of the allowed values \(\["on","off","unlisted"\]\)/,
      ],
      [
        'upstreams:\n  - name: a\n    url: ftp://x\n',
        /:3 upstreams\[0\]\.url: must be an http\(s\) URL without credentials/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    include: [issues]\n',
        /:4 upstreams\[0\]\.include: 'issues' is not a rule; write op:/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    deadlineMs: 0\n',
        /:4 upstreams\[0\]\.deadlineMs: must be >= 1$/,
      ],
      ['upstreams: []\n', /:1 upstreams: must NOT have fewer than 1 items$/],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    mode: lazy\n',
        /:4 upstreams\[0\]\.mode: must be equal to one of the allowed values \(\["auto","static","dynamic"\]\)/,
      ],
      [
        // A billion laughs, in small: every alias expanded multiplies the nodes by ten.
        'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\nupstreams:\n  - name: a\n    url: http://x\n    include: *d\n',
        /: its YAML aliases expand to more than 100 nodes \(MAX_ALIAS_COUNT\); write the repeated parts out$/,
      ],
      [
        'upstreams:\n  - name: a\n    url: http://x\n    __proto__: { polluted: true }\n',
        /:4 upstreams\[0\]\.__proto__: unknown field; allowed: name, url/,
      ],
      [
        'upstreams:\n  - name: a\n    url: [http://x\n',
        /:4 is neither JSON nor YAML: Flow sequence in block collection/,
      ],
    ];
    for (const [text, message] of cases) {
      const file = configFile(text);
      expect(() => readUpstreamsConfig(file, env), text).toThrow(message);
      expect(() => readUpstreamsConfig(file, env), text).toThrow(file);
    }
    expect(() => readUpstreamsConfig('/nonexistent.yaml', env)).toThrow(
      /cannot read the config file \/nonexistent\.yaml/,
    );
  });

  it('reads a key only from a variable UPSTREAM_KEY_ENVS marks (names, PREFIX* or *SUFFIX)', () => {
    const file = configFile(
      'upstreams:\n  - name: acme\n    url: https://acme.example\n    auth:\n      keyEnv: ACME_CREDENTIAL\n',
    );
    const marked = { ...env, ACME_CREDENTIAL: 'acme-0123456789abcdef', UPSTREAM_KEY_ENVS: 'ACME_*, OTHER' };
    expect(readUpstreamsConfig(file, marked)[0]?.apiKey).toBe('acme-0123456789abcdef');
    expect(() => readUpstreamsConfig(file, { ...marked, UPSTREAM_KEY_ENVS: '' })).toThrow(
      /ACME_CREDENTIAL is not marked as an upstream key/,
    );
    const github = configFile(
      'upstreams:\n  - name: gh\n    url: https://api.github.com\n    auth:\n      keyEnv: GITHUB_TOKEN\n',
    );
    expect(() => readUpstreamsConfig(github, marked)).toThrow(
      /GITHUB_TOKEN is not marked as an upstream key: UPSTREAM_KEY_ENVS \(ACME_\*,OTHER\)/,
    );
    const own = configFile(
      'upstreams:\n  - name: gh\n    url: https://api.github.com\n    auth:\n      keyEnv: REDIS_PASSWORD\n',
    );
    expect(() => readUpstreamsConfig(own, { ...env, REDIS_PASSWORD: 'p'.repeat(20), UPSTREAM_KEY_ENVS: '*' })).toThrow(
      /REDIS_PASSWORD is one of the gateway's own secrets/,
    );
  });
});
