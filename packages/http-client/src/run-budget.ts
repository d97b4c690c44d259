// A budget for a run: attempts, bytes and cost, checked before every attempt (retries
// included), so a runaway loop stops with a clear error instead of burning the key.
import { BudgetExceededError } from './errors/local-errors.js';

export interface RunBudgetLimits {
  maxAttempts?: number | undefined;
  /** Body bytes sent plus received. */
  maxBytes?: number | undefined;
  maxCost?: number | undefined;
}

export interface RunBudgetUsage {
  attempts: number;
  bytes: number;
  cost: number;
}

export class RunBudget {
  readonly limits: Readonly<RunBudgetLimits>;
  readonly #used: RunBudgetUsage = { attempts: 0, bytes: 0, cost: 0 };

  constructor(limits: RunBudgetLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
        throw new RangeError(`RunBudget: ${name} must be a number >= 0, got ${String(value)}`);
      }
    }
    this.limits = { ...limits };
  }

  get used(): Readonly<RunBudgetUsage> {
    return { ...this.#used };
  }

  /** Throws when the next attempt, costing `cost`, would go over a limit. */
  check(call: { method: string; path: string; cost: number; cause?: unknown }): void {
    const { maxAttempts, maxBytes, maxCost } = this.limits;
    const fail = (limit: 'attempts' | 'bytes' | 'cost', message: string) => {
      throw new BudgetExceededError(message, { method: call.method, path: call.path, limit, cause: call.cause });
    };
    if (maxAttempts !== undefined && this.#used.attempts + 1 > maxAttempts) {
      fail('attempts', `budget exceeded: ${this.#used.attempts} of ${maxAttempts} attempts used`);
    }
    if (maxBytes !== undefined && this.#used.bytes >= maxBytes) {
      fail('bytes', `budget exceeded: ${this.#used.bytes} of ${maxBytes} bytes used`);
    }
    if (maxCost !== undefined && this.#used.cost + call.cost > maxCost) {
      fail('cost', `budget exceeded: cost ${this.#used.cost} + ${call.cost} would pass ${maxCost}`);
    }
  }

  chargeAttempt(cost: number): void {
    this.#used.attempts++;
    this.#used.cost += cost;
  }

  chargeBytes(bytes: number): void {
    this.#used.bytes += bytes;
  }
}
