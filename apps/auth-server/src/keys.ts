// The signing keys: made at first start, kept in a file only this user can read (a volume in
// compose), and rotatable. A rotation puts a new key first (oidc-provider signs with the first
// key of an algorithm) and keeps the old ones in the JWKS, so tokens signed before it still
// verify; `retire` drops all but the newest once those tokens have expired.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

export interface KeyFile {
  keys: JWK[];
}

/** The most keys kept at once: a rotation beyond this drops the oldest. */
export const MAX_KEYS = 4;

async function newKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return {
    ...jwk,
    kid: `es256-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}-${Math.random().toString(36).slice(2, 6)}`,
    alg: 'ES256',
    use: 'sig',
  };
}

/** A key set held in memory only (an embedded stack's, which lives as long as one command). */
export async function generateKeys(): Promise<KeyFile> {
  return { keys: [await newKey()] };
}

/** The keys in `path`, made (and written) when the file does not exist yet. */
export async function loadOrCreateKeys(path: string): Promise<KeyFile> {
  if (existsSync(path)) return readKeys(path);
  const file = { keys: [await newKey()] };
  writeKeys(path, file);
  return file;
}

export function readKeys(path: string): KeyFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`the key file ${path} is not JSON: ${(error as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'object' && k && 'd' in k)) {
    throw new Error(`the key file ${path} must hold {"keys": [private JWKs]}; delete it to make a new one`);
  }
  return { keys: keys as JWK[] };
}

/** A new signing key first; the previous ones stay to verify what they signed. */
export async function rotateKeys(path: string): Promise<KeyFile> {
  const current = existsSync(path) ? readKeys(path) : { keys: [] };
  const file = { keys: [await newKey(), ...current.keys].slice(0, MAX_KEYS) };
  writeKeys(path, file);
  return file;
}

/** Only the newest key stays. */
export function retireKeys(path: string): KeyFile {
  const file = { keys: readKeys(path).keys.slice(0, 1) };
  writeKeys(path, file);
  return file;
}

/** Written whole or not at all (a temporary file renamed), readable by this user only. */
function writeKeys(path: string, file: KeyFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}
