// Shutting down without dropping the calls in flight (SIGTERM: a rolling deploy, a scale-in).
// Closing the server at once cut every answer still being worked on: a client saw an empty
// reply, and a write in flight became a write whose outcome nobody knows. Draining, as Go's
// http.Server.Shutdown does:
//  1. stop accepting connections; idle keep-alive connections close now, and every answer
//     that starts from here says `Connection: close`, so no client reuses this replica;
//  2. end the streams that never finish by themselves (GET streams, subscriptions/listen):
//     their clients reconnect, on another replica, and resume from their last event id; with a
//     shared store (Redis), end the resumable POST streams too: their requests run on here,
//     and their clients resume them on another replica, where the answers arrive through Redis;
//  3. wait for the requests in flight, up to SHUTDOWN_GRACE_MS;
//  4. whatever still runs then is stopped, and answered with an error that says so (not an
//     empty reply), before the remaining connections are closed.
// An answer already under way when the drain began was sent with `Connection: keep-alive`; its
// connection is closed once idle, swept every SWEEP_MS (a client that reuses it in that window
// sees the connection close before its request was read, which HTTP allows it to retry).
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { type HttpContext, ShuttingDown } from './exchange.js';

const SWEEP_MS = 50;
/** After the grace period: how long the stopped requests get to send their error answers. */
const LAST_WORDS_MS = 1_000;

export interface DrainReport {
  /** Requests in flight when the drain began. */
  inFlight: number;
  /** Of those, still running when the grace period ran out, and stopped. */
  stopped: number;
}

export async function drain(app: FastifyInstance, ctx: HttpContext, graceMs: number): Promise<DrainReport> {
  ctx.draining = true;
  const inFlight = ctx.inFlight.size;
  const server = app.server;
  // Set before the first byte of every answer that starts from now on.
  server.on('request', (_request, response) => {
    response.shouldKeepAlive = false;
  });
  let serverClosed = false;
  const closed = new Promise<void>((resolve) => server.close(() => resolve())).then(() => {
    serverClosed = true;
  });
  await ctx.listens.endAll();
  for (const stream of ctx.getStreams.values()) stream.close();
  if (ctx.store.kind === 'redis') for (const stream of [...ctx.resumable]) stream.close();
  ctx.log.info(
    { inFlight, graceMs },
    `shutting down: no new connections; waiting up to ${graceMs} ms (SHUTDOWN_GRACE_MS) for ${inFlight} request(s) in flight`,
  );
  const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
  // Done when no connection is left and no request runs (a resumed stream's request has none).
  const grace = new AbortController();
  // Nothing runs and every handed-over answer is stored (its client resumes it elsewhere).
  const busy = () => ctx.inFlight.size > 0 || ctx.answering.size > 0;
  const idle = async () => {
    await closed;
    while (busy() && !grace.signal.aborted) await sleep(SWEEP_MS);
    return true;
  };
  try {
    const finished = await Promise.race([idle(), sleep(graceMs, false, { signal: grace.signal })]);
    if (finished) return { inFlight, stopped: 0 };
    const stopped = ctx.inFlight.size;
    ctx.log.warn(
      { stopped, graceMs },
      `shutting down: ${stopped} request(s) still running after SHUTDOWN_GRACE_MS (${graceMs} ms) stopped; each is answered with an error`,
    );
    ctx.inFlight.abortAll(new ShuttingDown(graceMs));
    // Their answers (errors saying so) are written, or stored for the clients that resume.
    const until = Date.now() + LAST_WORDS_MS;
    while ((busy() || !serverClosed) && Date.now() < until) await sleep(SWEEP_MS);
    return { inFlight, stopped };
  } finally {
    grace.abort();
    clearInterval(sweep);
  }
}
