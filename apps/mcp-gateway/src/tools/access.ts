// Who may call which tool. Two sources, both applied wherever a tool shows or runs (tools/list,
// dynamic mode's search and describe, tools/call, call_operation):
// - the scopes the operation declares in its OpenAPI `security` requirement: a signed-in
//   caller's token must grant them all (a local caller over stdio has no token: not applied);
// - the config file's rules per upstream, for every caller:
//     deny:  [{ tools: [op:delete_*], claim: { sub: ben } }]   a matching rule refuses
//     allow: [{ tools: [tag:replies], scope: replies:write }]   a tool some allow rule covers
//                                                              needs one of them to match
//   A rule matches a caller when it holds every scope named and every claim has one of the
//   values given; a rule with no condition matches everyone. `tools` (selectors as in include)
//   says which tools a rule covers; without it, all of the upstream's.
// A refusal says what would allow the call: the scopes, when scopes would.
import type { Caller } from '../protocol/messages.js';
import type { AccessRule, UpstreamRules } from './selection.js';

export type { AccessRule, UpstreamRules };

import type { Tool } from './tool.js';

export type Access = { ok: true } | { ok: false; reason: string; scopes: string[] };

const ALLOWED: Access = { ok: true };
/** A caller the transport does not name (the shared-token mode): no scopes, no claims. */
const NOBODY: Caller = { subject: '', scopes: [], local: true };

export class AccessPolicy {
  readonly #rules: ReadonlyMap<string | undefined, UpstreamRules>;

  constructor(rules: ReadonlyMap<string | undefined, UpstreamRules> = new Map()) {
    this.#rules = rules;
  }

  /** Whether any rule is configured (without one, only declared scopes count). */
  get hasRules(): boolean {
    return [...this.#rules.values()].some((r) => r.allow.length > 0 || r.deny.length > 0);
  }

  /** Whether this caller may call this tool, and if not why and which scopes would allow it. */
  check(tool: Tool, caller: Caller | undefined): Access {
    const who = caller ?? NOBODY;
    if (!who.local) {
      const granted = new Set(who.scopes);
      const missing = tool.binding.scopes.filter((s) => !granted.has(s));
      if (missing.length > 0) {
        return { ok: false, reason: `it needs the scope ${missing.join(' ')}`, scopes: missing };
      }
    }
    const rules = this.#rules.get(tool.binding.upstream);
    if (!rules) return ALLOWED;
    const covers = (rule: AccessRule) => rule.tools.length === 0 || rule.tools.some((s) => s.matches(tool));
    const denied = rules.deny.find((rule) => covers(rule) && matches(rule, who));
    if (denied) return { ok: false, reason: `the rule ${denied.name} refuses it`, scopes: [] };
    const allowing = rules.allow.filter(covers);
    if (allowing.length === 0 || allowing.some((rule) => matches(rule, who))) return ALLOWED;
    // The scopes of a rule that asks for nothing but scopes would allow it: a client may step up.
    const stepUp = allowing.find((rule) => Object.keys(rule.claims).length === 0);
    const granted = new Set(who.scopes);
    return {
      ok: false,
      reason: `no allow rule (${allowing.map((r) => r.name).join(', ')}) lets this caller use it`,
      scopes: stepUp ? stepUp.scopes.filter((s) => !granted.has(s)) : [],
    };
  }
}

function matches(rule: AccessRule, caller: Caller): boolean {
  if (!rule.scopes.every((s) => caller.scopes.includes(s))) return false;
  for (const [claim, values] of Object.entries(rule.claims)) {
    const value = claim === 'sub' ? caller.subject : caller.claims?.[claim];
    const held = Array.isArray(value) ? value.map(String) : value === undefined ? [] : [String(value)];
    if (!held.some((v) => values.includes(v))) return false;
  }
  return true;
}
