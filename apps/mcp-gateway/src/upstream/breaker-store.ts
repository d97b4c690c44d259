// The circuit breakers' state in Redis, shared by every replica: what one replica sees failing
// opens the breaker for all, and one probe (from any replica) closes it again. Each replica keeps
// the last state it heard for a short while, so a call through a closed breaker costs no round
// trip; outcomes are counted in Redis (a Lua script per change, atomic), one bucket per tenth of
// the window, as the memory store does.
import type {
  BreakerAdmission,
  BreakerOptions,
  BreakerOutcome,
  BreakerState,
  BreakerStore,
  BreakerTransition,
} from '@agentwire/http-client';
import type { Redis } from 'ioredis';

/** How long a replica trusts the state it last heard before asking Redis again. */
export const BREAKER_CACHE_MS = 250;

const BUCKETS = 10;

// KEYS[1] the breaker's hash. ARGV: now, breakDurationMs. Returns {allowed, probe|state, halfOpenAt}.
const ADMIT = `
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
local now = tonumber(ARGV[1])
local brk = tonumber(ARGV[2])
if state == 'closed' then return {1, 0, 0} end
if state == 'open' then
  local untilMs = tonumber(redis.call('HGET', KEYS[1], 'openUntil') or '0')
  if now < untilMs then return {0, 'open', untilMs} end
  redis.call('HSET', KEYS[1], 'state', 'half_open', 'probeSince', now)
  return {1, 1, 0}
end
local since = tonumber(redis.call('HGET', KEYS[1], 'probeSince') or '0')
if since == 0 or now >= since + brk then
  redis.call('HSET', KEYS[1], 'probeSince', now)
  return {1, 1, 0}
end
return {0, 'half_open', since + brk}
`;

// KEYS[1] the breaker's hash. ARGV: outcome, probe (1|0), now, failureRatio, samplingDurationMs,
// minimumThroughput, breakDurationMs. Returns {from, to, openUntil}: when it is open, until when
// (Redis's word, not this replica's guess: another replica may have opened it earlier).
const RECORD = `
local k = KEYS[1]
local outcome, probe, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ratio, window, minCalls, brk = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local from = redis.call('HGET', k, 'state') or 'closed'
local ttl = window + brk * 2
local function open()
  redis.call('DEL', k)
  redis.call('HSET', k, 'state', 'open', 'openUntil', now + brk)
  redis.call('PEXPIRE', k, ttl)
end
if probe == '1' and from == 'half_open' then
  if outcome == 'failure' then open()
  elseif outcome == 'success' then redis.call('DEL', k)
  else redis.call('HSET', k, 'probeSince', 0) end
  return {from, redis.call('HGET', k, 'state') or 'closed', tonumber(redis.call('HGET', k, 'openUntil') or '0')}
end
if from ~= 'closed' or outcome == 'none' then
  return {from, from, tonumber(redis.call('HGET', k, 'openUntil') or '0')}
end
local index = math.floor(now / (window / ${BUCKETS}))
redis.call('HINCRBY', k, 'c:' .. index, 1)
if outcome == 'failure' then redis.call('HINCRBY', k, 'f:' .. index, 1) end
redis.call('PEXPIRE', k, ttl)
if outcome ~= 'failure' then return {from, from, 0} end
local calls, failures = 0, 0
local fields = redis.call('HGETALL', k)
for i = 1, #fields, 2 do
  local name, value = fields[i], tonumber(fields[i + 1])
  local kind, at = string.match(name, '^([cf]):(%d+)$')
  if kind then
    if tonumber(at) <= index - ${BUCKETS} then redis.call('HDEL', k, name)
    elseif kind == 'c' then calls = calls + value
    else failures = failures + value end
  end
end
if calls >= minCalls and failures >= ratio * calls then
  open()
  return {from, 'open', now + brk}
end
return {from, from, 0}
`;

type Run = (...args: unknown[]) => Promise<unknown>;

export class RedisBreakerStore implements BreakerStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #quit: boolean;
  /** The state last heard per key, and when. */
  readonly #heard = new Map<string, { state: BreakerState; at: number; halfOpenAt: number }>();

  constructor(redis: Redis, prefix: string, quitOnClose = false) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#quit = quitOnClose;
    redis.defineCommand('agentwireBreakerAdmit', { numberOfKeys: 1, lua: ADMIT });
    redis.defineCommand('agentwireBreakerRecord', { numberOfKeys: 1, lua: RECORD });
  }

  #run(name: string): Run {
    return ((this.#redis as unknown as Record<string, Run>)[name] as Run).bind(this.#redis);
  }

  admit(key: string, now: number, options: BreakerOptions): BreakerAdmission | Promise<BreakerAdmission> {
    const heard = this.#heard.get(key);
    // Closed, and heard lately: go without asking (the common case, no round trip).
    if (heard && heard.state === 'closed' && now - heard.at < BREAKER_CACHE_MS) return { allowed: true, probe: false };
    if (heard && heard.state === 'open' && now < heard.halfOpenAt)
      return { allowed: false, state: 'open', halfOpenAt: heard.halfOpenAt };
    return this.#run('agentwireBreakerAdmit')(`${this.#prefix}breaker:${key}`, now, options.breakDurationMs).then(
      (answer) => {
        const [allowed, probeOrState, halfOpenAt] = answer as [number, number | string, number];
        if (allowed === 1) {
          const probe = probeOrState === 1;
          this.#heard.set(key, { state: probe ? 'half_open' : 'closed', at: now, halfOpenAt: 0 });
          return { allowed: true, probe };
        }
        const state = probeOrState as 'open' | 'half_open';
        this.#heard.set(key, { state, at: now, halfOpenAt: Number(halfOpenAt) });
        return { allowed: false, state, halfOpenAt: Number(halfOpenAt) };
      },
      // Redis out of reach: the breaker is a protection, not a gate; calls go, and the upstream's
      // own failures still end them.
      (): BreakerAdmission => ({ allowed: true, probe: false }),
    );
  }

  async record(
    key: string,
    outcome: BreakerOutcome,
    probe: boolean,
    now: number,
    options: BreakerOptions,
  ): Promise<BreakerTransition> {
    const [from, to, openUntil] = (await this.#run('agentwireBreakerRecord')(
      `${this.#prefix}breaker:${key}`,
      outcome,
      probe ? 1 : 0,
      now,
      options.failureRatio,
      options.samplingDurationMs,
      options.minimumThroughput,
      options.breakDurationMs,
    )) as [BreakerState, BreakerState, number];
    this.#heard.set(key, { state: to, at: now, halfOpenAt: to === 'open' ? Number(openUntil) : 0 });
    return { from, to };
  }

  async close(): Promise<void> {
    if (this.#quit) await this.#redis.quit().catch(() => undefined);
  }
}
