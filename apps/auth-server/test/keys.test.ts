import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadOrCreateKeys, retireKeys, rotateKeys, SCRIPT_CLIENT_ID, startAuthServer } from '../src/index.js';

const RESOURCE = 'http://127.0.0.1:1/mcp';
const SECRET = 'x'.repeat(8) + 'y'.repeat(16);

async function serve(keysFile: string) {
  const { keys } = await loadOrCreateKeys(keysFile);
  const server = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys,
    resources: { [RESOURCE]: ['emails:read'] },
    demoPassword: 'unused-password',
    scriptClientSecret: SECRET,
  });
  const kids = async () =>
    ((await (await fetch(`${server.issuer}/jwks`)).json()).keys as Array<{ kid: string }>).map((k) => k.kid);
  const tokenKid = async () => {
    const answer = await fetch(`${server.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${SCRIPT_CLIENT_ID}:${SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: RESOURCE, scope: 'emails:read' }),
    });
    return decodeProtectedHeader((await answer.json()).access_token).kid;
  };
  return { server, kids, tokenKid };
}

describe('the signing keys', () => {
  it('are made at first start in a 0600 file, kept, and rotate with the JWKS serving old and new', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'auth-rotate-')), 'keys.json');
    const first = await serve(file);
    const [original] = await first.kids();
    expect(await first.tokenKid()).toBe(original);
    await first.server.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const again = await serve(file); // kept: the same key after a restart
    expect(await again.kids()).toEqual([original]);
    await again.server.close();

    const rotated = await rotateKeys(file);
    const [newest] = rotated.keys.map((k) => k.kid);
    const during = await serve(file);
    expect(await during.kids()).toEqual([newest, original]); // old tokens still verify
    expect(await during.tokenKid()).toBe(newest); // new tokens use the new key
    await during.server.close();

    retireKeys(file);
    const after = await serve(file);
    expect(await after.kids()).toEqual([newest]);
    await after.server.close();
  });
});
