// What the test suites need from the machine, found or provided: a Redis (the toy API's stores,
// the gateway's sessions, and the outage tests that stop and restart their own) and a Chromium
// (the API reference page and the agent's report). `pnpm test` (scripts/test.mjs) calls
// provide() once before any suite starts; the suites' global set-up calls startRedis() when run
// on their own. Plain JavaScript, so that Node runs it before anything is built; types are in
// prerequisites.d.mts.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { platform } from 'node:os';
import { delimiter, join } from 'node:path';

const REDIS_ARGS = ['--save', '', '--appendonly', 'no'];
const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome', 'chrome'];
const CHROMIUM_MAC_APPS = [
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
/** Debian's package names for what apt-get can install. */
const APT_PACKAGES = { redis: 'redis-server', chromium: 'chromium' };

/** The machine cannot give the tests what they need; the message says what is missing and how to get it. */
export class PrerequisiteError extends Error {
  name = 'PrerequisiteError';
}

/** The first executable file with this name on PATH, or undefined. */
export function which(name, env = process.env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** CHROMIUM_PATH when set (it must be an executable file), else a Chromium or Chrome installed on this machine. */
export function findChromium(env = process.env) {
  if (env.CHROMIUM_PATH) {
    if (!isExecutable(env.CHROMIUM_PATH)) {
      throw new PrerequisiteError(
        `CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file. Point it at a Chromium or Chrome binary, or unset it to let pnpm test look for one.`,
      );
    }
    return { path: env.CHROMIUM_PATH, from: 'CHROMIUM_PATH' };
  }
  for (const name of CHROMIUM_NAMES) {
    const path = which(name, env);
    if (path) return { path, from: 'PATH' };
  }
  if (platform() === 'darwin') {
    const path = CHROMIUM_MAC_APPS.find(isExecutable);
    if (path) return { path, from: 'Applications' };
  }
  return undefined;
}

/** Whether a Docker engine answers, the way testcontainers looks for one (DOCKER_HOST, the socket, rootless). */
export async function dockerAnswers() {
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  const { getContainerRuntimeClient } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port')),
      );
    });
  });
}

/** Whether something at host:port answers a Redis PING (with +PONG, or -NOAUTH when it wants a password). */
export function answersPing(host, port, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port }, () => socket.write('PING\r\n'));
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('data', (chunk) => done(/^(\+PONG|-NOAUTH)/.test(chunk.toString())));
    socket.once('error', () => done(false));
  });
}

/** A Redis URL without its password, for messages. */
export function redactUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(REDIS_URL is not a URL)';
  }
}

/** A private redis-server process on loopback, on the given port (to start it again where it was) or a free one. */
export async function startRedisProcess({ port, binary = which('redis-server'), args = [] } = {}) {
  if (!binary) throw new PrerequisiteError('redis-server is not on PATH');
  const chosen = port ?? (await freePort());
  const child = spawn(binary, ['--port', String(chosen), '--bind', '127.0.0.1', ...REDIS_ARGS, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start within 10 s: ${output.trim()}`));
    }, 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code} before it was ready: ${output.trim()}`));
    });
    child.stdout.on('data', (chunk) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    kind: 'process',
    describe: `a redis-server process (${binary}) on 127.0.0.1:${chosen}`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A Redis container (image REDIS_IMAGE, default redis:7-bookworm), its port published on the given host port or a free one. */
export async function startRedisContainer({
  port,
  image = process.env.REDIS_IMAGE || 'redis:7-bookworm',
  args = [],
} = {}) {
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(image)
    .withCommand(['redis-server', ...REDIS_ARGS, '--protected-mode', 'no', ...args])
    .withExposedPorts(port === undefined ? 6379 : { container: 6379, host: port })
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  const host = container.getHost();
  const mapped = container.getMappedPort(6379);
  const stop = async () => {
    await container.stop({ timeout: 1_000 });
  };
  // A host that looks like a container to testcontainers (it has a /.dockerenv) is sent to the
  // bridge's address, which may not route from here.
  if (!(await answersPing(host, mapped))) {
    await stop();
    throw new Error(`the Redis container started but does not answer at ${host}:${mapped}`);
  }
  return {
    url: `redis://${host}:${mapped}`,
    port: mapped,
    kind: 'container',
    describe: `a Redis container (${image}) on ${host}:${mapped}`,
    stop,
  };
}

/**
 * A Redis of the test's own, which it may stop and start again on the same port: a redis-server
 * process when one is installed (it starts in milliseconds), else a container.
 */
export async function startRedis({ port, args = [] } = {}) {
  if (which('redis-server')) return startRedisProcess({ port, args });
  if (await dockerAnswers()) return startRedisContainer({ port, args });
  throw new PrerequisiteError(missingMessage(['redis'], 'absent'));
}

/** Ubuntu's `chromium` deb is only a wrapper that installs a snap: there, a browser comes from snap. */
function isUbuntu() {
  try {
    return /^(ID|ID_LIKE)=.*ubuntu/m.test(readFileSync('/etc/os-release', 'utf8'));
  } catch {
    return false;
  }
}

/** What apt-get can install here of the missing needs. */
function aptPackages(missing) {
  return missing.filter((m) => m === 'redis' || !isUbuntu()).map((m) => APT_PACKAGES[m]);
}

/** The commands that install the missing needs on this OS, or undefined when we do not know them. */
function installCommand(missing) {
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  const parts = [];
  if (platform() === 'darwin') {
    if (missing.includes('redis')) parts.push('brew install redis');
    if (missing.includes('chromium')) parts.push('brew install --cask chromium');
  } else if (which('apt-get')) {
    const packages = aptPackages(missing);
    if (packages.length > 0) parts.push(`${sudo}apt-get update && ${sudo}apt-get install -y ${packages.join(' ')}`);
    if (missing.includes('chromium') && isUbuntu()) parts.push(`${sudo}snap install chromium`);
  } else if (which('dnf')) {
    parts.push(`${sudo}dnf install -y ${missing.map((m) => (m === 'redis' ? 'redis' : 'chromium')).join(' ')}`);
  }
  return parts.length > 0 ? parts.join(' && ') : undefined;
}

/**
 * The one message for what is missing. `docker` says how Docker fared: 'absent' (no engine
 * answered), 'unused' (--no-docker), or why a Redis container did not start.
 */
function missingMessage(missing, docker) {
  const lines = ['pnpm test cannot start: the tests need what this machine does not have.'];
  if (missing.includes('redis')) {
    const why =
      docker === 'absent'
        ? 'no redis-server on PATH and no Docker engine answered'
        : docker === 'unused'
          ? 'no redis-server on PATH (and Docker not used: --no-docker)'
          : `no redis-server on PATH, and a Redis container did not start: ${docker}`;
    const withUrl = process.env.REDIS_URL
      ? ' (REDIS_URL is set, but the outage tests stop and restart a Redis of their own)'
      : '';
    lines.push(`  Redis     ${why}${withUrl}`);
  }
  if (missing.includes('chromium')) {
    lines.push(`  Chromium  no CHROMIUM_PATH and no ${CHROMIUM_NAMES.join(', ')} found`);
  }
  const command = installCommand(missing);
  lines.push(command ? `Install with:  ${command}` : 'Install them with your package manager.');
  if (missing.includes('redis') && docker === 'absent') {
    lines.push('Or start a Docker engine: the tests then run Redis in a container.');
  }
  if (missing.includes('chromium')) lines.push('Or set CHROMIUM_PATH to a Chromium or Chrome you already have.');
  return lines.join('\n');
}

function aptInstall(packages, log) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log(`installing ${packages.join(' and ')} with apt-get (not found here; we are root and apt-get is here)`);
  const started = Date.now();
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...packages],
  ]) {
    const run = spawnSync('apt-get', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (run.status !== 0) {
      const tail = `${run.stderr ?? ''}${run.error?.message ?? ''}`.trim().split('\n').slice(-5).join('\n  ');
      throw new PrerequisiteError(
        `pnpm test cannot start: apt-get ${args[0]} failed (exit ${run.status}) while installing ${packages.join(', ')}.\n  ${tail}`,
      );
    }
  }
  log(`installed ${packages.join(' and ')} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * Finds or provides everything the suites need, installing Debian packages only as root on a
 * machine with apt-get (and only when `install`). Resolves to the environment the suites run
 * with, a one-line summary of what was chosen, and stop() for what was started; `started` hears
 * of each Redis as soon as it runs, so a caller can stop it on a signal. Rejects with a
 * PrerequisiteError when the machine cannot give it.
 */
export async function provide({
  log = () => undefined,
  install = true,
  docker = true,
  started = () => undefined,
} = {}) {
  const env = process.env;
  let chromium = findChromium(env);
  const redisUrl = env.REDIS_URL;
  if (redisUrl) {
    const { hostname, port, tls } = parseRedisUrl(redisUrl);
    // Over TLS (rediss://) a plain-text PING gets no answer: trust the URL then.
    if (!tls && !(await answersPing(hostname, port))) {
      throw new PrerequisiteError(
        `pnpm test cannot start: REDIS_URL=${redactUrl(redisUrl)} does not answer a Redis PING. Start that Redis, or unset REDIS_URL to let pnpm test start one.`,
      );
    }
  }
  // How Docker fared: 'unused', 'absent', 'ready', or why its Redis container did not start.
  let dockerState = docker ? ((await dockerAnswers()) ? 'ready' : 'absent') : 'unused';
  let redis;
  let containerError;
  if (!redisUrl && dockerState === 'ready') {
    try {
      redis = await startRedisContainer();
      started(redis);
    } catch (error) {
      containerError = firstLine(error);
      dockerState = containerError;
    }
  }

  const missing = [];
  if (!redis && !which('redis-server') && dockerState !== 'ready') missing.push('redis');
  if (!chromium) missing.push('chromium');
  if (missing.length > 0) {
    const packages = aptPackages(missing);
    const root = process.getuid?.() === 0;
    if (!(install && root && which('apt-get') && packages.length === missing.length)) {
      throw new PrerequisiteError(missingMessage(missing, dockerState));
    }
    aptInstall(packages, log);
    chromium = findChromium(env);
    if (missing.includes('redis') && !which('redis-server')) {
      throw new PrerequisiteError('pnpm test cannot start: apt-get installed redis-server but it is not on PATH.');
    }
    if (!chromium)
      throw new PrerequisiteError('pnpm test cannot start: apt-get installed chromium but it is not on PATH.');
  }

  let redisNote;
  if (redisUrl) {
    redisNote = `Redis from REDIS_URL (${redactUrl(redisUrl)})`;
  } else {
    if (!redis) {
      try {
        redis = await startRedisProcess();
      } catch (error) {
        throw new PrerequisiteError(`pnpm test cannot start: redis-server did not start: ${firstLine(error)}`);
      }
      started(redis);
    }
    redisNote = `Redis: ${redis.describe}${containerError ? ` (a container did not start: ${containerError})` : ''}`;
  }
  const chromiumNote = `Chromium: ${chromium.path}${chromium.from === 'CHROMIUM_PATH' ? ' (CHROMIUM_PATH)' : ''}`;
  return {
    env: { REDIS_URL: redis?.url ?? redisUrl, CHROMIUM_PATH: chromium.path },
    summary: `${redisNote} · ${chromiumNote}`,
    stop: async () => {
      await redis?.stop();
    },
  };
}

function firstLine(error) {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

function parseRedisUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new PrerequisiteError(
      `pnpm test cannot start: REDIS_URL is not a URL. Use redis://host:port, or unset it to let pnpm test start a Redis.`,
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new PrerequisiteError(
      `pnpm test cannot start: REDIS_URL=${redactUrl(url)} must start with redis:// or rediss://.`,
    );
  }
  return {
    hostname: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port || 6379),
    tls: parsed.protocol === 'rediss:',
  };
}
