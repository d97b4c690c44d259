// The stack as containers, the way docker-compose.yml runs it: images built from this
// repository's Dockerfile, one network, Redis, the toy API and the gateway, each started once its
// own HEALTHCHECK passes. Secrets are random per run and given only through the environment.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

// The reaper (Ryuk) is an image pulled from Docker Hub; machines without a registry cannot run
// it. Every container here is stopped by the suite itself.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';

const { GenericContainer, Network, Wait } = await import('testcontainers');
type StartedTestContainer = import('testcontainers').StartedTestContainer;
type StartedNetwork = import('testcontainers').StartedNetwork;

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const REDIS_IMAGE = process.env.REDIS_IMAGE || 'redis:7-bookworm';
const TAG = 'agentwire-test';

export interface ContainerStack {
  network: StartedNetwork;
  redis: StartedTestContainer;
  api: StartedTestContainer;
  gateway: StartedTestContainer;
  apiKey: string;
  gatewayToken: string;
  redisPassword: string;
  apiUrl: string;
  mcpUrl: string;
  /** The agent image, for one-shot runs on the stack's network. */
  agentImage: string;
  stop(): Promise<void>;
}

/** Builds one target of the Dockerfile; Docker's layer cache shares the build stage. */
async function buildImage(target: 'toy-api' | 'mcp-gateway' | 'agent'): Promise<string> {
  const name = `${TAG}/${target}:latest`;
  await GenericContainer.fromDockerfile(REPO_ROOT, 'Dockerfile')
    .withTarget(target)
    .build(name, { deleteOnExit: false });
  return name;
}

export async function startContainerStack(): Promise<ContainerStack> {
  const apiImage = await buildImage('toy-api');
  const gatewayImage = await buildImage('mcp-gateway');
  const agentImage = await buildImage('agent');
  const apiKey = randomBytes(18).toString('hex');
  const gatewayToken = randomBytes(18).toString('hex');
  const redisPassword = randomBytes(18).toString('hex');

  const network = await new Network().start();
  const started: StartedTestContainer[] = [];
  const stop = async () => {
    for (const container of started.reverse()) await container.stop({ timeout: 5_000 }).catch(() => undefined);
    await network.stop().catch(() => undefined);
  };
  try {
    const redis = await new GenericContainer(REDIS_IMAGE)
      .withNetwork(network)
      .withNetworkAliases('redis')
      .withEnvironment({ REDIS_PASSWORD: redisPassword })
      .withUser('redis')
      // As docker-compose.yml runs it: the password in a config file, never on the command line.
      .withCommand([
        'sh',
        '-c',
        "umask 077 && printf 'requirepass %s\\n' \"$REDIS_PASSWORD\" > /tmp/redis.conf && exec redis-server /tmp/redis.conf --save '' --appendonly no --protected-mode no --maxmemory 256mb --maxmemory-policy noeviction",
      ])
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    started.push(redis);
    const api = await new GenericContainer(apiImage)
      .withNetwork(network)
      .withNetworkAliases('toy-api')
      .withEnvironment({
        TOY_API_KEY: apiKey,
        REDIS_URL: 'redis://redis:6379',
        REDIS_PASSWORD: redisPassword,
        LOG_LEVEL: 'debug',
      })
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHealthCheck())
      .start();
    started.push(api);
    const gateway = await new GenericContainer(gatewayImage)
      .withNetwork(network)
      .withNetworkAliases('mcp-gateway')
      .withEnvironment({
        UPSTREAM_URL: 'http://toy-api:8080',
        UPSTREAM_API_KEY: apiKey,
        MCP_GATEWAY_TOKEN: gatewayToken,
        ALLOWED_HOSTS: 'mcp-gateway',
        REDIS_URL: 'redis://redis:6379',
        REDIS_PASSWORD: redisPassword,
      })
      .withExposedPorts(8090)
      .withWaitStrategy(Wait.forHealthCheck())
      .start();
    started.push(gateway);
    return {
      network,
      redis,
      api,
      gateway,
      apiKey,
      gatewayToken,
      redisPassword,
      apiUrl: `http://${api.getHost()}:${api.getMappedPort(8080)}`,
      mcpUrl: `http://${gateway.getHost()}:${gateway.getMappedPort(8090)}/mcp`,
      agentImage,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs the agent image once on the stack's network and returns its exit code and output. */
export async function runAgentContainer(
  stack: ContainerStack,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  const client = await getContainerRuntimeClient();
  // No exposed ports, so start() returns once the process runs; Docker's wait gives the exit.
  const container = await new GenericContainer(stack.agentImage)
    .withNetwork(stack.network)
    .withEnvironment({
      AGENTWIRE_API_URL: 'http://toy-api:8080',
      AGENTWIRE_MCP_URL: 'http://mcp-gateway:8090/mcp',
      TOY_API_KEY: stack.apiKey,
      MCP_GATEWAY_TOKEN: stack.gatewayToken,
      ...env,
    })
    .withCommand(args)
    .start();
  const raw = client.container.getById(container.getId());
  try {
    const { StatusCode } = (await raw.wait()) as { StatusCode: number };
    const { stdout, stderr } = await collectLogs(container);
    return { code: StatusCode, stdout, stderr };
  } finally {
    await container.stop({ timeout: 1_000 }).catch(() => undefined);
  }
}

async function collectLogs(container: StartedTestContainer): Promise<{ stdout: string; stderr: string }> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  const client = await getContainerRuntimeClient();
  const raw = client.container.getById(container.getId());
  const read = async (which: 'stdout' | 'stderr') => {
    const buffer = (await raw.logs({ stdout: which === 'stdout', stderr: which === 'stderr', follow: false })) as
      | Buffer
      | string;
    return demultiplex(Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer));
  };
  return { stdout: await read('stdout'), stderr: await read('stderr') };
}

/** Docker's log stream without a TTY: 8-byte frame headers (stream, 0, 0, 0, length) per chunk. */
function demultiplex(buffer: Buffer): string {
  let out = '';
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const length = buffer.readUInt32BE(offset + 4);
    out += buffer.subarray(offset + 8, offset + 8 + length).toString('utf8');
    offset += 8 + length;
  }
  return out;
}

/** Docker's own record of how a container ended, after a stop that keeps it. */
export async function stopAndInspect(
  container: StartedTestContainer,
): Promise<{ exitCode: number; oomKilled: boolean; user: string }> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  const client = await getContainerRuntimeClient();
  const raw = client.container.getById(container.getId());
  await container.stop({ timeout: 10_000, remove: false }); // ms: SIGTERM, then SIGKILL after 10 s
  const info = await raw.inspect();
  await raw.remove({ force: true }).catch(() => undefined);
  return { exitCode: info.State.ExitCode, oomKilled: info.State.OOMKilled, user: info.Config.User };
}
