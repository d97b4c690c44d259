// Types for prerequisites.mjs (plain JavaScript so that Node runs it before anything is built).

/** The machine cannot give the tests what they need; the message says what is missing and how to get it. */
export declare class PrerequisiteError extends Error {}

/** A Redis that a test or `pnpm test` started, and stops. */
export interface RunningRedis {
  url: string;
  port: number;
  kind: 'process' | 'container';
  /** What it is, for the one line `pnpm test` prints. */
  describe: string;
  stop(): Promise<void>;
}

export interface Provided {
  /** REDIS_URL and CHROMIUM_PATH for the suites. */
  env: { REDIS_URL: string; CHROMIUM_PATH: string };
  /** One line: what was chosen for each need. */
  summary: string;
  /** Stops what provide() started (a Redis process or container). */
  stop(): Promise<void>;
}

export declare function which(name: string, env?: NodeJS.ProcessEnv): string | undefined;
export declare function findChromium(
  env?: NodeJS.ProcessEnv,
): { path: string; from: 'CHROMIUM_PATH' | 'PATH' | 'Applications' } | undefined;
export declare function dockerAnswers(): Promise<boolean>;
export declare function freePort(): Promise<number>;
export declare function answersPing(host: string, port: number, timeoutMs?: number): Promise<boolean>;
export declare function redactUrl(url: string): string;
/** `args`: more redis-server arguments, e.g. `['--requirepass', secret, '--maxmemory', '2mb']`. */
export declare function startRedisProcess(options?: {
  port?: number;
  binary?: string;
  args?: string[];
}): Promise<RunningRedis>;
export declare function startRedisContainer(options?: {
  port?: number;
  image?: string;
  args?: string[];
}): Promise<RunningRedis>;
export declare function startRedis(options?: { port?: number; args?: string[] }): Promise<RunningRedis>;
export declare function provide(options?: {
  log?: (line: string) => void;
  /** Install what is missing with apt-get when root (default true). */
  install?: boolean;
  /** Look for a Docker engine for Redis (default true). */
  docker?: boolean;
  /** Hears of each Redis as soon as it runs, so that a signal can stop it. */
  started?: (redis: RunningRedis) => void;
}): Promise<Provided>;
