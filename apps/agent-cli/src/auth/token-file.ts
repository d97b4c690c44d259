// Where the agent keeps what signing in gave it: per MCP server, the client registration and
// the tokens. One JSON file readable by this user only (0600, in a 0700 folder), written whole
// or not at all; a file others can read is refused rather than used, since it holds
// credentials. AGENTWIRE_TOKEN_FILE moves it (tests, several identities).
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../usage-error.js';

export interface ServerEntry {
  /** The authorization server that issued what is here (RFC 8414 issuer). */
  issuer?: string | undefined;
  /** The client registration (dynamic, or a metadata document URL as client_id). */
  client?: Record<string, unknown> | undefined;
  tokens?: Record<string, unknown> | undefined;
  /** Seconds since the epoch when the access token was saved (its expiry is saved + expires_in). */
  savedAt?: number | undefined;
}

type Entries = Record<string, ServerEntry>;

/** The most a token file may hold: far more than any number of sign-ins, far less than harm. */
const MAX_FILE_BYTES = 1024 * 1024;

export function defaultTokenFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTWIRE_TOKEN_FILE) return env.AGENTWIRE_TOKEN_FILE;
  const config = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(config, 'agentwire', 'tokens.json');
}

export class TokenFile {
  constructor(readonly path: string) {}

  read(): Entries {
    if (!existsSync(this.path)) return {};
    const stat = statSync(this.path);
    if ((stat.mode & 0o077) !== 0) {
      throw new UsageError(
        `${this.path} can be read by other users (mode ${(stat.mode & 0o777).toString(8)}); it holds tokens. Run: chmod 600 ${this.path}`,
      );
    }
    if (stat.size > MAX_FILE_BYTES)
      throw new UsageError(`${this.path} is larger than ${MAX_FILE_BYTES} bytes; delete it and sign in again`);
    try {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as unknown;
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Entries) : {};
    } catch {
      throw new UsageError(`${this.path} is not JSON; delete it (agent logout --all) and sign in again`);
    }
  }

  get(server: string): ServerEntry {
    return this.read()[server] ?? {};
  }

  update(server: string, change: (entry: ServerEntry) => ServerEntry | undefined): void {
    const entries = this.read();
    const next = change(entries[server] ?? {});
    if (next === undefined) delete entries[server];
    else entries[server] = next;
    this.#write(entries);
  }

  /** Forgets everything (the file goes). */
  clear(): void {
    rmSync(this.path, { force: true });
  }

  #write(entries: Entries): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.path);
  }
}
