// A person approves a destructive call before it runs. Which calls: those the document marks
// (`x-mcp.approval`) or a rule of APPROVAL_REQUIRE matches (method:POST, op:create_*, ...), or
// under APPROVAL=destructive every destructive one (DELETE, or destructiveHint), less the tools
// APPROVAL_ALLOW names. How the person is asked depends on the
// client:
// - a 2026-07-28 client that declared elicitation gets an input_required result (multi round-trip
//   requests, SEP-2322) whose elicitation shows what will be sent; its retry carries the answer
//   and the gateway's requestState, signed (HMAC-SHA256 with APPROVAL_KEY), bound to the caller,
//   the tool and the arguments, expiring, and good for one call: any replica can resume it, and a
//   state edited, expired, sent for another call or used twice is refused;
// - a session client that declared elicitation gets elicitation/create on the call's stream;
// - any other client gets a tool error saying approval is required and how to grant it.
// Nothing reaches the upstream before the answer is yes.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { INTERNAL_ERROR, INVALID_PARAMS, RpcError } from '../protocol/json-rpc.js';
import type { Caller } from '../protocol/messages.js';
import type { Selector } from './selection.js';
import type { Tool } from './tool.js';
import { canonical } from './writes.js';

/** marked: only what the document marks; destructive: every destructive tool too; off: none. */
export type ApprovalPolicy = 'marked' | 'destructive' | 'off';

export const DEFAULT_APPROVAL_TTL_MS = 300_000;
/** The input request's key when the document names none. */
export const APPROVAL_INPUT = 'approval';
/** The most characters of the arguments shown to the person (the rest is cut, and says so). */
const MAX_SHOWN = 2000;

export interface ApprovalOptions {
  policy: ApprovalPolicy;
  /** APPROVAL_ALLOW: tools that never need approval. */
  allow: ReadonlySet<string>;
  /** APPROVAL_REQUIRE: rules (op:, tag:, method:, path:) whose tools need it, marked or not. */
  require?: readonly Selector[] | undefined;
  /** APPROVAL_KEY: the HMAC key of request states (a random one per process without it). */
  key: Buffer;
  /** APPROVAL_TTL_MS: how long a person has to answer. */
  ttlMs: number;
  /** Where used states are remembered (each is good for one call). */
  used: UsedStates;
}

/** The states already used, each until it expires: memory, or Redis shared by replicas. */
export interface UsedStates {
  /** Marks a state used; false when it already was. `owner`: the caller's subject ('' without sign-in). */
  use(nonce: string, ttlMs: number, owner: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The most used states a memory store remembers (they expire after APPROVAL_TTL_MS). */
export const MAX_MEMORY_USED = 100_000;
/** The most of them one caller may hold: a tenth, so that no one caller fills the store for all. */
export const MAX_MEMORY_USED_PER_CALLER = 10_000;

export class MemoryUsedStates implements UsedStates {
  readonly #used = new Map<string, { until: number; owner: string }>();
  /** How many each owner holds. */
  readonly #held = new Map<string, number>();
  readonly #max: number;
  readonly #perOwner: number;

  constructor(max = MAX_MEMORY_USED, perOwner = MAX_MEMORY_USED_PER_CALLER) {
    this.#max = max;
    this.#perOwner = perOwner;
  }

  async use(nonce: string, ttlMs: number, owner: string): Promise<boolean> {
    const now = Date.now();
    const before = this.#used.get(nonce);
    if (before && before.until > now) return false;
    if (before) this.#forget(nonce, before);
    if (this.#used.size >= this.#max || (this.#held.get(owner) ?? 0) >= this.#perOwner) {
      for (const [n, entry] of this.#used) if (entry.until <= now) this.#forget(n, entry);
    }
    // Still full of states that have not expired: none is forgotten (a forgotten one could be
    // used again), so this approval is refused instead, and nothing is sent.
    if ((this.#held.get(owner) ?? 0) >= this.#perOwner) {
      throw new RpcError(
        INTERNAL_ERROR,
        `This caller holds ${this.#perOwner} used approvals in memory, the most one caller may, each until its state expires (APPROVAL_TTL_MS): nothing was sent. Call again later, or run the gateway with REDIS_URL, which keeps them in Redis.`,
      );
    }
    if (this.#used.size >= this.#max) {
      throw new RpcError(
        INTERNAL_ERROR,
        `The gateway remembers at most ${this.#max} used approvals in memory, each until its state expires (APPROVAL_TTL_MS), and all are in use: nothing was sent. Call again later, or run the gateway with REDIS_URL, which keeps them in Redis.`,
      );
    }
    this.#used.set(nonce, { until: now + ttlMs, owner });
    this.#held.set(owner, (this.#held.get(owner) ?? 0) + 1);
    return true;
  }

  #forget(nonce: string, entry: { owner: string }): void {
    this.#used.delete(nonce);
    const left = (this.#held.get(entry.owner) ?? 1) - 1;
    if (left > 0) this.#held.set(entry.owner, left);
    else this.#held.delete(entry.owner);
  }

  async close(): Promise<void> {}
}

export class RedisUsedStates implements UsedStates {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #quit: boolean;

  constructor(redis: Redis, prefix: string, quitOnClose = false) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#quit = quitOnClose;
  }

  async use(nonce: string, ttlMs: number, _owner: string): Promise<boolean> {
    // No share per caller: Redis holds what its memory allows, each state until it expires.
    return (await this.#redis.set(`${this.#prefix}approval-used:${nonce}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  async close(): Promise<void> {
    if (this.#quit) await this.#redis.quit().catch(() => undefined);
  }
}

/** What a request state carries, signed. */
interface StatePayload {
  v: 1;
  /** The caller's subject ('' without sign-in). */
  sub: string;
  tool: string;
  /** A digest of the arguments (canonical JSON). */
  args: string;
  /** The input request's key the answer comes under. */
  key: string;
  /** Expiry, epoch ms. */
  exp: number;
  nonce: string;
}

/** What the tool layer does next with a call that may need approval. */
export type ApprovalStep =
  | { kind: 'run' }
  /** Ask (2026-07-28): the input_required result to answer with. */
  | { kind: 'ask'; result: Record<string, unknown> }
  /** The person said no: the result to answer with. */
  | { kind: 'declined'; text: string }
  /** The client cannot ask a person: the refusal's text. */
  | { kind: 'cannot_ask'; text: string };

/** How a call's client can reach a person, as the tool layer knows it. */
export interface Asker {
  /** A 2026-07-28 request: its params (inputResponses, requestState) and whether it declared elicitation. */
  modern?: { params: Record<string, unknown> | undefined; elicitation: boolean } | undefined;
  /** A session client that declared elicitation: sends elicitation/create, resolves with its answer within `ttlMs`. */
  elicit?: ((params: Record<string, unknown>, ttlMs: number) => Promise<unknown>) | undefined;
}

export class Approvals {
  readonly #options: ApprovalOptions;

  constructor(options: ApprovalOptions) {
    this.#options = options;
  }

  /** How long a person may take to answer (APPROVAL_TTL_MS). */
  get ttlMs(): number {
    return this.#options.ttlMs;
  }

  // mutation testing: from here
  /** Whether this tool needs a person's yes before each call. */
  needed(tool: Tool): boolean {
    const { policy, allow } = this.#options;
    if (policy === 'off' || allow.has(tool.name)) return false;
    // The operator's rules win over a document's `never` (a document comes from the upstream).
    if (this.#options.require?.some((rule) => rule.matches(tool))) return true;
    if (tool.binding.approval === 'never') return false;
    if (tool.binding.approval === 'required') return true;
    return policy === 'destructive' && tool.annotations.destructiveHint && !tool.annotations.readOnlyHint;
  }

  /** Asks, or reads the answer, for a call that needs approval. */
  async step(
    tool: Tool,
    args: Record<string, unknown>,
    caller: Caller | undefined,
    asker: Asker,
  ): Promise<ApprovalStep> {
    const question = this.#question(tool, args);
    if (asker.modern) return this.#modern(tool, args, caller, asker.modern, question);
    if (asker.elicit) {
      let answer: unknown;
      try {
        answer = await asker.elicit(question.params, this.#options.ttlMs);
      } catch (error) {
        const why =
          (error as Error).name === 'TimeoutError'
            ? `no answer came within APPROVAL_TTL_MS (${this.#options.ttlMs} ms)`
            : `the client could not ask (${(error as Error).message})`;
        return { kind: 'declined', text: `The call of ${tool.name} was not approved: ${why}; nothing was sent.` };
      }
      return readAnswer(answer, 'approval', tool);
    }
    return { kind: 'cannot_ask', text: cannotAskText(tool) };
  }

  async #modern(
    tool: Tool,
    args: Record<string, unknown>,
    caller: Caller | undefined,
    modern: NonNullable<Asker['modern']>,
    question: Question,
  ): Promise<ApprovalStep> {
    const params = modern.params ?? {};
    const responses = params.inputResponses;
    if (
      'inputResponses' in params &&
      (typeof responses !== 'object' || responses === null || Array.isArray(responses))
    ) {
      throw new RpcError(INVALID_PARAMS, 'tools/call: params.inputResponses must be an object (input key -> response)');
    }
    const state = params.requestState;
    if (state !== undefined) {
      if (typeof state !== 'string')
        throw new RpcError(INVALID_PARAMS, 'tools/call: params.requestState must be a string');
      const payload = this.#verify(state, tool, args, caller);
      const answer = (responses as Record<string, unknown> | undefined)?.[payload.key];
      if (answer !== undefined) {
        const step = readAnswer(answer, payload.key, tool);
        if (step.kind === 'declined') return step;
        if (!(await this.#options.used.use(payload.nonce, Math.max(1, payload.exp - Date.now()), payload.sub))) {
          throw new RpcError(
            INVALID_PARAMS,
            `requestState was already used: an approval is good for one call of ${tool.name}; call again without requestState to ask again`,
          );
        }
        return { kind: 'run' };
      }
      // The state, but no answer under its key: asked again (SEP-2322: re-request what is missing).
    }
    // An answer without a state is never an approval: the person must have seen this very call.
    if (!modern.elicitation) return { kind: 'cannot_ask', text: cannotAskText(tool) };
    return {
      kind: 'ask',
      result: {
        resultType: 'input_required',
        inputRequests: { [question.key]: { method: 'elicitation/create', params: question.params } },
        requestState: this.#sign(tool, args, caller, question.key),
      },
    };
  }
  // mutation testing: to here

  #question(tool: Tool, args: Record<string, unknown>): Question {
    const key = tool.binding.approvalPrompt?.key ?? APPROVAL_INPUT;
    const shown = whatWillBeSent(tool, args);
    const asked = tool.binding.approvalPrompt?.message ?? `Allow ${tool.name}?`;
    return {
      key,
      params: {
        message: `${asked}\nIt will send: ${shown}\nNothing is sent unless you accept.`,
        requestedSchema: {
          type: 'object',
          properties: {
            approve: {
              type: 'boolean',
              title: 'Run this call',
              description: 'Accept to run it; decline to refuse.',
              default: true,
            },
          },
        },
      },
    };
  }

  #sign(tool: Tool, args: Record<string, unknown>, caller: Caller | undefined, key: string): string {
    const payload: StatePayload = {
      v: 1,
      sub: caller?.subject ?? '',
      tool: tool.name,
      args: argsDigest(this.#options.key, args),
      key,
      exp: Date.now() + this.#options.ttlMs,
      nonce: randomBytes(12).toString('base64url'),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.#mac(body)}`;
  }

  // mutation testing: from here
  #verify(state: string, tool: Tool, args: Record<string, unknown>, caller: Caller | undefined): StatePayload {
    const refuse = (why: string): never => {
      throw new RpcError(
        INVALID_PARAMS,
        `requestState ${why}; call ${tool.name} again without requestState to be asked afresh`,
      );
    };
    const [body, mac, extra] = state.split('.');
    if (!body || !mac || extra !== undefined || state.length > 4096) refuse('is not one this gateway issued');
    const expected = Buffer.from(this.#mac(body as string));
    const given = Buffer.from(mac as string);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      refuse('failed its integrity check (it was changed, or signed with another APPROVAL_KEY)');
    }
    const payload = JSON.parse(Buffer.from(body as string, 'base64url').toString('utf8')) as StatePayload;
    if (payload.exp <= Date.now())
      refuse(`expired (an approval must be answered within APPROVAL_TTL_MS, ${this.#options.ttlMs} ms)`);
    if (payload.sub !== (caller?.subject ?? '')) refuse('was issued to another caller');
    if (payload.tool !== tool.name) refuse(`was issued for tool ${payload.tool.slice(0, 100)}, not ${tool.name}`);
    if (payload.args !== argsDigest(this.#options.key, args)) refuse('was issued for other arguments');
    return payload;
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#options.key).update(body).digest('base64url');
  }
}

interface Question {
  key: string;
  params: Record<string, unknown>;
}

/** Keyed, so a state shows nothing of the arguments it binds. */
function argsDigest(key: Buffer, args: Record<string, unknown>): string {
  return createHmac('sha256', key)
    .update(`args\0${canonical(args)}`)
    .digest('base64url');
}

/** An elicitation result: run on accept (unless approve is false), declined otherwise; refused when it is not one. */
function readAnswer(answer: unknown, key: string, tool: Tool): ApprovalStep {
  const a = answer as { action?: unknown; content?: unknown } | null;
  const action = typeof a === 'object' && a !== null ? a.action : undefined;
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel') {
    throw new RpcError(
      INVALID_PARAMS,
      `inputResponses.${key} must be an elicitation result: {action: "accept" | "decline" | "cancel", content?}`,
    );
  }
  if (action !== 'accept') return { kind: 'declined', text: declinedText(tool, action) };
  const content = a?.content;
  if (content !== undefined && (typeof content !== 'object' || content === null || Array.isArray(content))) {
    throw new RpcError(INVALID_PARAMS, `inputResponses.${key}.content must be an object`);
  }
  if ((content as { approve?: unknown } | undefined)?.approve === false)
    return { kind: 'declined', text: declinedText(tool) };
  return { kind: 'run' };
}
// mutation testing: to here

function declinedText(tool: Tool, action = 'decline'): string {
  return `The call of ${tool.name} was not approved (the person chose ${action}); nothing was sent.`;
}

function cannotAskText(tool: Tool): string {
  return `Tool ${tool.name} needs a person's approval before each call, and this client cannot ask one (it declared no elicitation capability); nothing was sent. Use a client that supports elicitation, or have the operator allow the tool without asking (APPROVAL_ALLOW=${tool.name}).`;
}

/** What the person reads: the method, the path with its values, and the other arguments. */
export function whatWillBeSent(tool: Tool, args: Record<string, unknown>): string {
  const b = tool.binding;
  let path = b.path;
  const rest: Record<string, unknown> = { ...args };
  for (const p of b.params) {
    if (p.in !== 'path' || args[p.arg] === undefined) continue;
    path = path.replace(`{${p.name}}`, encodeURIComponent(String(args[p.arg])));
    delete rest[p.arg];
  }
  const shown = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  const line = `${b.method} ${path}${shown}`;
  return line.length > MAX_SHOWN ? `${line.slice(0, MAX_SHOWN)}... (${line.length - MAX_SHOWN} more characters)` : line;
}
