// The toy API's Prometheus metrics (prom-client), one registry per app. Labels are bounded:
// route templates (`/employees/:employee_id`), never raw paths or ids; `unmatched` for a path
// no route has; fault actions and methods are fixed words.
import { Tally } from '@agentwire/telemetry';
import { Counter, Registry } from 'prom-client';

export class ApiMetrics {
  readonly registry = new Registry();
  // Every request is counted here and handed to the counter when it is scraped (Tally says why).
  readonly #requests = new Tally(['route', 'method', 'status'] as const);
  readonly requests: Counter<'route' | 'method' | 'status'> = new Counter({
    name: 'toy_api_requests_total',
    help: 'Requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [this.registry],
    collect: () => this.#requests.into(this.requests),
  });
  readonly faults = new Counter({
    name: 'toy_api_injected_faults_total',
    help: 'Faults injected by the fault rules, by action.',
    labelNames: ['action'],
    registers: [this.registry],
  });
  readonly replays = new Counter({
    name: 'toy_api_idempotent_replays_total',
    help: 'Requests answered from a stored response of their Idempotency-Key.',
    registers: [this.registry],
  });

  /** One request answered: its route template (`unmatched` for none), method and status. */
  request(route: string, method: string, status: number): void {
    this.#requests.add([route, method, status]);
  }
}
