#!/usr/bin/env node
// The chaos run's agents and faults (scripts/chaos.sh starts the scaled stack and runs this).
// While 24 agents work through the balancer (legacy sessions holding GET streams, stateless
// 2026-07-28 clients, agents replying to emails with idempotency keys, `agent triage` runs,
// agents exporting emails as tasks they poll through any replica, and 20 agents writing notes,
// a write the API does not dedupe, with keys the gateway dedupes by), it kills a gateway replica and starts it again, kills a toy-API replica
// (holding replies in their handler first, so that some die with their keys claimed), and
// restarts Redis, one after another. Then it checks what must hold and prints what each fault
// cost. Exit 0 when every check holds, 1 when one does not (each says which and why).
//
// Environment: CHAOS_API_URL, CHAOS_MCP_URL, TOY_API_KEY, MCP_GATEWAY_TOKEN, CHAOS_COMPOSE (the
// compose command for this stack, e.g. "docker-compose -p x -f docker-compose.scale.yml"),
// CHAOS_SECONDS (60), CHAOS_REPORT (a JSON file for the figures), CHAOS_STORIES (0: how many
// reply keys to tell the story of even when all went well; a wrong one is always told).
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

/** The settings scripts/chaos.sh passes (see the header). */
const { env } = process;
const run = promisify(execFile);
const API = must('CHAOS_API_URL');
const MCP = must('CHAOS_MCP_URL');
const KEY = must('TOY_API_KEY');
const TOKEN = must('MCP_GATEWAY_TOKEN');
const COMPOSE = must('CHAOS_COMPOSE');
// The authorization server (restarted among the faults) and the client that gets tokens there.
const AUTH = env.CHAOS_AUTH_URL;
const CLIENT_SECRET = env.CHAOS_CLIENT_SECRET;
const SECONDS = Number(env.CHAOS_SECONDS ?? 60);
const AGENT_BIN = new URL('../apps/agent-cli/dist/main.js', import.meta.url).pathname;
const RUN = randomUUID().slice(0, 8);
const CALL_DEADLINE_MS = 20_000;
const TRIAGE_DEADLINE_S = 40;

function must(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`chaos: ${name} is not set (scripts/chaos.sh sets it)`);
    process.exit(2);
  }
  return value;
}

const t0 = Date.now();
const now = () => (Date.now() - t0) / 1000;
let running = true;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every attempt of every tool call: when, which agent, and how it ended. */
const attempts = [];
/** Every tool call: how it ended after its retries. */
const calls = [];
const faults = [];

// ---------------------------------------------------------------------------------------------
// One MCP exchange over HTTP, classified the way an agent must: done, retry, or give up.

async function rpc(message, headers) {
  const started = now();
  let status = 0;
  try {
    const response = await fetch(MCP, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(10_000),
    });
    status = response.status;
    const text = await response.text();
    if (status === 404 && headers['mcp-session-id']) return { outcome: 'session-lost', status, started };
    if (status >= 500 || status === 429) return { outcome: 'retry', status, why: `HTTP ${status}`, started };
    if (status === 202) return { outcome: 'ok', status, started };
    const body = response.headers.get('content-type')?.includes('text/event-stream')
      ? JSON.parse(
          text
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .at(-1)
            ?.slice(6) ?? 'null',
        )
      : JSON.parse(text);
    if (body?.error) {
      // -32603 (internal) covers a store that was down for a moment; the rest are our mistakes.
      return { outcome: body.error.code === -32603 ? 'retry' : 'fail', status, why: body.error.message, started };
    }
    const result = body?.result;
    if (result?.isError) {
      const upstream = result._meta?.['agentwire.dev/upstream'];
      // A keyless write cut after it was sent: whether it happened is unknown, so the gateway
      // did not retry it and says so; the agent decides (an export leaves nothing behind).
      if (result._meta?.['agentwire.dev/write']?.outcome === 'unknown') {
        return {
          outcome: 'unknown',
          status,
          why: String(result.content?.[0]?.text ?? '').slice(0, 160),
          started,
          result,
        };
      }
      return {
        outcome: upstream?.retryable ? 'retry' : 'fail',
        status,
        why: String(result.content?.[0]?.text ?? '').slice(0, 160),
        started,
        result,
        headers: response.headers,
      };
    }
    return { outcome: 'ok', status, started, result, headers: response.headers };
  } catch (error) {
    return { outcome: 'retry', status, why: error.cause?.code ?? error.name, started };
  }
}

/**
 * A tool call with retries inside its deadline; `safe` says whether repeating it is harmless.
 * `capabilities`: what a 2026-07-28 client declares on the request (the tasks extension, say).
 */
async function callTool(agent, name, args, headers, capabilities = {}) {
  const deadline = Date.now() + CALL_DEADLINE_MS;
  const started = now();
  for (let attempt = 1; ; attempt++) {
    const message = { jsonrpc: '2.0', id: attempt, method: 'tools/call', params: { name, arguments: args } };
    if (headers['mcp-protocol-version'] === '2026-07-28') {
      message.params._meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': capabilities,
      };
    }
    const extra =
      headers['mcp-protocol-version'] === '2026-07-28' ? { 'mcp-method': 'tools/call', 'mcp-name': name } : {};
    const r = await rpc(message, { ...headers, ...extra });
    attempts.push({
      agent,
      tool: name,
      key: args['idempotency-key'],
      t: r.started,
      ended: now(),
      status: r.status,
      ok: r.outcome === 'ok',
      outcome: r.outcome,
      why: r.why,
    });
    if (
      r.outcome === 'ok' ||
      r.outcome === 'fail' ||
      r.outcome === 'unknown' ||
      r.outcome === 'session-lost' ||
      Date.now() > deadline
    ) {
      const outcome = r.outcome === 'retry' ? 'deadline' : r.outcome;
      calls.push({ agent, tool: name, started, ended: now(), attempts: attempt, outcome, why: r.why });
      return { ...r, outcome };
    }
    await sleep(Math.min(1000, 100 * 2 ** (attempt - 1)));
  }
}

// ---------------------------------------------------------------------------------------------
// The agents.

/** A 2025-11-25 session with a GET stream of its log events, calling a read-only tool. */
async function sessionAgent(i) {
  const agent = `session-${i}`;
  const version = '2025-11-25';
  let sessionId = '';
  for (let tries = 0; !sessionId && tries < 50; tries++) {
    const response = await fetch(MCP, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: agent, version: '1' } },
      }),
    }).catch(() => undefined);
    sessionId = response?.headers.get('mcp-session-id') ?? '';
    await response?.text();
    if (!sessionId) await sleep(200);
  }
  if (!sessionId) throw new Error(`${agent}: no session after 50 tries`);
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': version };
  await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  await rpc({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } }, headers);
  const created = now();

  // ids in arrival order, and when each arrived (`at`, run seconds), to tell a loss's story.
  const stream = { ids: [], at: [], cuts: [], resumedOk: 0, resumedBad: [] };
  const reading = readStream(agent, headers, stream);
  let okCalls = 0;
  let okAfterFaults = 0;
  let lost = false;
  while (running && !lost) {
    const r = await callTool(
      agent,
      'office_days',
      { employee_id: `e-${String((i % 12) + 1).padStart(2, '0')}` },
      headers,
    );
    if (r.outcome === 'ok') {
      okCalls++;
      if (faults.length > 0) okAfterFaults++;
    }
    if (r.outcome === 'session-lost') lost = true;
    await sleep(300);
  }
  // Everything the store holds for this session, read again from the start on any replica;
  // then give the live stream a moment to catch up with the last of it before comparing.
  const all = await readAll(headers);
  const last = all?.at(-1);
  for (let i = 0; i < 50 && last !== undefined && !stream.ids.includes(last); i++) await sleep(100);
  stream.stop = true;
  await reading;
  return { agent, kind: 'session', created, okCalls, okAfterFaults, lost, stream, storedIds: all };
}

/**
 * Whether `next` is the event id right after `last` (ids are <epoch>-<n>): the next n in the
 * same epoch, or n = 1 of a later epoch (Redis restarted, and may have lost its last writes).
 */
function isNextId(next, last) {
  const [e1, n1] = next.split('-').map(Number);
  const [e0, n0] = last.split('-').map(Number);
  return e1 === e0 ? n1 === n0 + 1 : e1 > e0 && n1 === 1;
}

/** Parses `id:` lines off an SSE body until it ends or `stop`; calls onId for each. */
async function readIds(response, onId, shouldStop) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  // One read at a time: a read that loses the race to the timer is kept for the next turn, or
  // the chunk it brings would be dropped.
  let pending;
  try {
    while (!shouldStop()) {
      pending ??= reader.read();
      const next = await Promise.race([pending, sleep(500).then(() => undefined)]);
      if (next === undefined) continue;
      pending = undefined;
      const { value, done } = next;
      if (done) return 'ended';
      if (!value) continue;
      buffered += decoder.decode(value, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('id: ')) onId(line.slice(4).replace(/\r$/, ''));
    }
    return 'stopped';
  } catch {
    return 'error';
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

async function readStream(agent, headers, stream) {
  // From the first event on: Last-Event-ID 0-0 (ids are <epoch>-<n>) replays whatever the
  // session already has.
  let lastId = '0-0';
  let cutAt;
  while (!stream.stop) {
    let response;
    try {
      response = await fetch(MCP, {
        headers: {
          authorization: `Bearer ${TOKEN}`,
          accept: 'text/event-stream',
          ...headers,
          'last-event-id': lastId,
        },
      });
    } catch {
      await sleep(250);
      continue;
    }
    if (response.status !== 200) {
      await response.text().catch(() => undefined);
      await sleep(250);
      continue;
    }
    let first = true;
    const how = await readIds(
      response,
      (id) => {
        if (first && cutAt !== undefined) {
          // The first event after a cut must be the one after the last seen: nothing lost, nothing twice.
          if (isNextId(id, lastId)) stream.resumedOk++;
          else stream.resumedBad.push({ after: lastId, got: id });
        }
        first = false;
        stream.ids.push(id);
        stream.at.push(now());
        lastId = id;
      },
      () => stream.stop,
    );
    if (how !== 'stopped') {
      cutAt = now();
      stream.cuts.push({ t: cutAt, lastId, how, agent });
      await sleep(250);
    }
  }
}

async function readAll(headers) {
  for (let tries = 0; tries < 20; tries++) {
    try {
      const response = await fetch(MCP, {
        headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream', ...headers, 'last-event-id': '0-0' },
      });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      const ids = [];
      let quietSince = Date.now();
      await readIds(
        response,
        (id) => {
          ids.push(id);
          quietSince = Date.now();
        },
        () => Date.now() - quietSince > 1500,
      );
      return ids;
    } catch {
      await sleep(300);
    }
  }
  return undefined;
}

/** A stateless 2026-07-28 client: no session, every request on its own. */
async function statelessAgent(i) {
  const agent = `stateless-${i}`;
  const teams = ['firmware', 'analytics', 'legal'];
  let ok = 0;
  while (running) {
    const team = teams[i % 3];
    // list_employees mirrors `team` into Mcp-Param-Team (x-mcp-header): a 2026-07-28 client repeats it.
    const r = await callTool(
      agent,
      'list_employees',
      { team },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-param-team': team },
    );
    if (r.outcome === 'ok') ok++;
    await sleep(300);
  }
  return { agent, kind: 'stateless', okCalls: ok };
}

/** Replies to an email now and then, each with its own idempotency key, retried with that key. */
async function replyAgent(i) {
  const agent = `reply-${i}`;
  const emailId = `m-000${i + 1}`;
  const asked = [];
  for (let n = 0; running; n++) {
    const key = `chaos-${RUN}-${i}-${n}`;
    const body = `chaos ${RUN} reply ${i}.${n}`;
    const r = await callTool(
      agent,
      'reply_to_email',
      { email_id: emailId, body, 'idempotency-key': key },
      { 'mcp-protocol-version': '2026-07-28' },
    );
    asked.push({ key, body, outcome: r.outcome });
    await sleep(1500);
  }
  return { agent, kind: 'reply', emailId, asked };
}

/** How long a note agent keeps at one note: past the lease of a call cut by a kill (10 s + 5 s). */
const NOTE_DEADLINE_MS = 60_000;
/** The deadline each note write asks the gateway for, which bounds its lease. */
const NOTE_CALL_DEADLINE_MS = 10_000;
/** Every note write attempt: what the agent saw. */
const noteAttempts = [];

/**
 * One note write through the balancer (2026-07-28) with its key in _meta; `cutAfterMs` stops
 * listening that soon, as a client whose response stream broke mid-POST.
 */
async function writeNote(agent, text, key, cutAfterMs) {
  const message = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'create_note',
      arguments: { text },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'agentwire.dev/idempotencyKey': key,
        'agentwire.dev/deadlineMs': NOTE_CALL_DEADLINE_MS,
      },
    },
  };
  const t = now();
  try {
    const response = await fetch(MCP, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'create_note',
      },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(cutAfterMs ?? 15_000),
    });
    const text = await response.text();
    if (response.status !== 200) return { seen: 'retry', why: `HTTP ${response.status}`, t };
    const body = response.headers.get('content-type')?.includes('text/event-stream')
      ? JSON.parse(
          text
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5))
            .at(-1) ?? 'null',
        )
      : JSON.parse(text);
    if (!body?.result) return { seen: 'retry', why: body?.error?.message ?? 'no result', t };
    return { seen: 'result', result: body.result, t };
  } catch (error) {
    return { seen: 'retry', why: cutAfterMs ? 'cut on purpose' : (error.cause?.code ?? error.name), t };
  } finally {
    noteAttempts.push({ agent, key, t, ended: now() });
  }
}

/**
 * Writes notes (POST /notes takes no Idempotency-Key: only the gateway's dedupe stands between a
 * re-issued call and a second note), each under its own key, re-issued with that key whenever its
 * answer is lost; every third note's first answer is cut on purpose. A write whose outcome the
 * gateway says is unknown (its call was cut upstream, or its replica died mid-call) is looked up,
 * and written again under a new key only if it is not there.
 */
async function noteAgent(i) {
  const agent = `note-${i}`;
  const notes = [];
  for (let n = 0; running; n++) {
    const text = `chaos ${RUN} note ${i}.${n}`;
    let key = `chaos-note-${RUN}-${i}-${n}`;
    const note = { text, keys: [key], writes: 0, reissues: 0, replayed: false, reconciled: 0, outcome: 'deadline' };
    const deadline = Date.now() + NOTE_DEADLINE_MS;
    for (let attempt = 1; Date.now() < deadline; attempt++) {
      const r = await writeNote(agent, text, key, attempt === 1 && n % 3 === 0 ? 40 : undefined);
      note.writes++;
      if (attempt > 1) note.reissues++;
      if (r.seen === 'result') {
        const meta = r.result._meta ?? {};
        const refusal = meta['agentwire.dev/refusal'];
        const write = meta['agentwire.dev/write'];
        if (!r.result.isError) {
          note.outcome = 'written';
          note.replayed = write?.replayed === true;
          break;
        }
        if (refusal?.reason === 'unknown' || write?.outcome === 'unknown') {
          // Whether it happened is unknown: look (after a moment, for a request still on its way
          // to land: its call ended at the 10 s deadline or with its replica), and write it again
          // under a new key only if it is not there.
          note.reconciled++;
          await sleep(2000);
          if ((await api(`/notes?prefix=${encodeURIComponent(text)}`)).data.length > 0) {
            note.outcome = 'written';
            break;
          }
          key = `${key}-again`;
          note.keys.push(key);
          continue;
        }
        note.why = refusal?.reason ?? r.result.content?.[0]?.text?.slice(0, 160);
        // The key's own error, replayed: the same key will only ever answer it.
        if (write?.replayed) {
          note.outcome = 'failed';
          break;
        }
        if (refusal?.reason === 'in_progress') {
          await sleep(refusal.retryAfterMs ?? 250);
          continue;
        }
      } else note.why = r.why;
      await sleep(Math.min(1000, 100 * 2 ** (attempt - 1)));
    }
    notes.push(note);
    await sleep(700);
  }
  return { agent, kind: 'note', notes };
}

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const EXPORT_DATES = ['2026-06-08', '2026-06-09', '2026-06-10', '2026-06-11', '2026-06-12'];
const TASK_DEADLINE_MS = 60_000;
/** The gateway replica the fault plan kills (and starts again). */
const VICTIM = 'gateway-2';
/** When it was killed (seconds into the run), once it has been. */
let victimKilledAt;

/**
 * Exports a day's emails as a task (the tasks extension) and polls it to its end through the
 * balancer: each look may reach any replica, so a task outlives the replica that created it.
 */
async function taskAgent(i) {
  const agent = `task-${i}`;
  const tasks = [];
  for (let n = 0; running; n++) {
    const date = EXPORT_DATES[(i + n) % EXPORT_DATES.length];
    // The first agent's first export is made on gateway-2, which is killed while it runs: asked
    // again (round robin) until that replica is the one that answers, and long enough to span it.
    const onVictim = i === 0 && n === 0;
    let created;
    let restarts = 0;
    for (let tries = 0; tries < 30; tries++) {
      created = await callTool(
        agent,
        'export_emails',
        { date, duration_ms: onVictim ? 12_000 : 4000 },
        { 'mcp-protocol-version': '2026-07-28' },
        TASKS,
      );
      // A start cut upstream (its outcome unknown, as the gateway says): started again, which is
      // harmless for an export (it leaves nothing behind); a write that is not would look first.
      if (created.outcome === 'unknown') {
        restarts++;
        continue;
      }
      if (!onVictim || created.headers?.get('x-served-by') === VICTIM) break;
    }
    const task = {
      date,
      created: created.started,
      createdBy: created.headers?.get('x-served-by') ?? undefined,
      answeredBy: new Set(),
      restarts,
      outcome: created.outcome,
      why: created.why,
    };
    tasks.push(task);
    if (created.outcome !== 'ok') continue;
    if (created.result?.resultType !== 'task') {
      // The task store could not be reached (Redis restarting): the gateway followed the job instead.
      task.outcome = 'followed';
      task.file = fileOf(created.result);
      continue;
    }
    task.taskId = created.result.taskId;
    const until = Date.now() + TASK_DEADLINE_MS;
    task.outcome = 'timeout';
    while (Date.now() < until) {
      await sleep(created.result.pollIntervalMs ?? 1000);
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': TASKS,
      };
      const r = await rpc(
        { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: task.taskId, _meta: meta } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tasks/get', 'mcp-name': task.taskId },
      );
      task.looks = (task.looks ?? 0) + 1;
      if (r.outcome === 'ok' && now() > (victimKilledAt ?? Number.POSITIVE_INFINITY)) {
        task.answeredBy.add(r.headers?.get('x-served-by'));
      }
      if (r.outcome === 'fail') {
        task.outcome = 'refused';
        task.why = r.why;
        break;
      }
      if (r.outcome !== 'ok' || !['completed', 'failed', 'cancelled'].includes(r.result?.status)) continue;
      task.outcome = r.result.status;
      task.ended = now();
      if (r.result.status === 'completed') task.file = fileOf(r.result.result);
      else task.why = r.result.statusMessage ?? r.result.error?.message;
      break;
    }
  }
  return { agent, kind: 'task', tasks };
}

/** The export file in a tool result (text content), or undefined when it is not one. */
function fileOf(result) {
  try {
    const file = JSON.parse(result?.content?.[0]?.text ?? 'null');
    return file && Array.isArray(file.emails)
      ? { date: file.date, count: file.count, emails: file.emails.length }
      : undefined;
  } catch {
    return undefined;
  }
}

/** `agent triage` over and over through the balancer; each run replies to one urgent email. */
async function triageAgent(i) {
  const agent = `triage-${i}`;
  const runs = [];
  while (running) {
    const started = now();
    const child = spawn(
      process.execPath,
      [
        AGENT_BIN,
        'triage',
        '--via',
        'mcp-http',
        '--api-url',
        API,
        '--mcp-url',
        MCP,
        '--json',
        '--deadline',
        `${TRIAGE_DEADLINE_S}s`,
      ],
      {
        env: { PATH: env.PATH, TOY_API_KEY: KEY, MCP_GATEWAY_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    let stoppedBy = null;
    try {
      stoppedBy = JSON.parse(out).stoppedBy;
    } catch {}
    const said = `${err}\n${out}`.trim().split('\n').filter(Boolean);
    runs.push({
      started,
      ended: now(),
      code,
      stoppedBy,
      error: code === 0 ? undefined : said.slice(-3).join(' / ').slice(0, 300),
    });
    await sleep(500);
  }
  return { agent, kind: 'triage', runs };
}

// ---------------------------------------------------------------------------------------------
// What happened to an idempotency key, when a reply is stored more than once (or a stored reply's
// call failed): the copies, the agent's attempts, and each toy-API replica's log lines for the key
// (the API logs every step of a key at info: claimed, replayed, stored, released), with the
// outcome of each request. Enough to tell a write the Redis client repeated (the copies share an
// id) from a handler that ran twice (two ids, two 'stored' steps), from the CI log alone.

/** Every JSON log line of the toy-API replicas, with the replica it came from. */
async function apiLogLines() {
  const { stdout } = await run('bash', ['-c', `${COMPOSE} logs --no-color toy-api-1 toy-api-2`], {
    timeout: 60_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  const lines = [];
  for (const raw of stdout.split('\n')) {
    const bar = raw.indexOf('| {');
    if (bar < 0) continue;
    try {
      const line = JSON.parse(raw.slice(bar + 2));
      lines.push({ replica: /toy-api-\d/.exec(raw.slice(0, bar))?.[0] ?? '?', ...line });
    } catch {}
  }
  return lines;
}

async function printKeyStories(wrongKeys) {
  let lines = [];
  try {
    lines = await apiLogLines();
  } catch (error) {
    console.log(`chaos: could not read the toy-API logs: ${error.message}`);
  }
  const steps = lines.filter((l) => l.msg === 'idempotency');
  // Keys stored twice that no reply agent asked for (triage runs' keys) are found in the logs.
  const storedBy = new Map();
  for (const l of steps.filter((l) => l.idempotency === 'stored')) {
    storedBy.set(l.idempotencyKey, (storedBy.get(l.idempotencyKey) ?? 0) + 1);
  }
  const keys = [
    ...wrongKeys,
    ...[...storedBy]
      .filter(([key, n]) => n > 1 && !wrongKeys.some((w) => w.key === key))
      .map(([key]) => ({ key, copies: undefined })),
  ];
  const done = new Map(lines.filter((l) => l.msg === 'request completed').map((l) => [l.reqId, l]));
  const clock = (ms) => `t=${((ms - t0) / 1000).toFixed(2)} s`;
  for (const { key, copies } of keys) {
    console.log(`\nchaos: the story of idempotency key ${key}`);
    if (copies) {
      const ids = new Set(copies.map((c) => c.id));
      console.log(
        `  stored ${copies.length}x: ${copies.map((c) => `${c.id} (created ${clock(Date.parse(c.created_at))})`).join(', ')}` +
          `${copies.length > 1 ? (ids.size === 1 ? ': one id, so one write ran twice' : ': different ids, so the handler ran more than once') : ''}`,
      );
    }
    for (const a of attempts.filter((a) => a.key === key)) {
      console.log(
        `  agent ${a.agent}: attempt at t=${a.t.toFixed(2)} s, answered t=${a.ended.toFixed(2)} s: ${a.outcome} (HTTP ${a.status}${a.why ? `, ${a.why}` : ''})`,
      );
    }
    const keySteps = steps.filter((l) => l.idempotencyKey === key);
    if (keySteps.length === 0) console.log('  no toy-API log line names this key');
    for (const l of keySteps) {
      const end = done.get(l.reqId);
      console.log(
        `  ${l.replica} ${clock(l.time)} ${l.reqId}: ${l.idempotency}${l.err ? ` (${l.err.message})` : ''}` +
          `${end ? `; request answered ${end.res?.statusCode} after ${Math.round(end.responseTime)} ms` : '; no answer logged'}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The faults, one after another.

async function compose(...args) {
  await run('bash', ['-c', `${COMPOSE} ${args.join(' ')}`], { timeout: 60_000 });
}

/** Fault rules on one toy API replica only: its admin endpoint, from inside its container. */
async function replicaFaults(service, config) {
  const put =
    "fetch('http://127.0.0.1:8080/admin/faults',{method:'PUT',headers:{authorization:'Bearer '+process.env.TOY_API_KEY," +
    "'content-type':'application/json'},body:process.argv[1]}).then((r)=>{if(r.status!==200)process.exit(1)})";
  await compose('exec', '-T', service, 'node', '-e', `"${put}"`, `'${JSON.stringify(config)}'`);
}

async function fault(name, action) {
  const t = now();
  const back = await action();
  faults.push({ name, t, done: now(), ...(back === undefined ? {} : { back }) });
  console.log(
    `chaos: t=${t.toFixed(1)} s  ${name}${back === undefined ? '' : ` (answering again at t=${back.toFixed(1)} s)`}`,
  );
}

/** The Redis container's id, and the run id of the redis-server in it now. */
async function redisNow() {
  const { stdout } = await run('bash', ['-c', `${COMPOSE} ps -q redis`], { timeout: 60_000 });
  const container = stdout.trim();
  return { container, runId: (await probeRedis(container))?.runId };
}

/** PING and the server's run id, asked inside the container; undefined while it cannot answer. */
async function probeRedis(container) {
  const ask = 'export REDISCLI_AUTH="$REDIS_PASSWORD"; redis-cli ping && redis-cli info server';
  try {
    const { stdout } = await run('docker', ['exec', container, 'sh', '-c', ask], { timeout: 5_000 });
    if (!stdout.startsWith('PONG')) return undefined; // LOADING: up, not answering yet
    return { runId: /run_id:(\w+)/.exec(stdout)?.[1] };
  } catch {
    return undefined; // stopping, stopped, starting
  }
}

/**
 * When a new redis-server (another run id) answers PING after the restart: the outage no
 * gateway can shorten. Probed from the moment the restart begins, alongside it. A probe takes
 * up to a second or two under the run's load; the start of the one that got the answer is kept,
 * so the time is late by at most the failed probe before it.
 */
async function redisAnswersAgain(container, oldRunId) {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const probed = now();
    const answer = await probeRedis(container);
    if (answer && answer.runId !== oldRunId) return probed;
    await sleep(100);
  }
  return undefined;
}

async function faultPlan() {
  const at = async (s) => {
    while (now() < s) await sleep(50);
  };
  if (AUTH) {
    await at(SECONDS * 0.08);
    await fault('restart the authorization server', () => compose('restart', 'auth-server'));
  }
  await at(SECONDS * 0.18);
  await fault(`SIGKILL ${VICTIM}`, () => compose('kill', '-s', 'SIGKILL', VICTIM));
  victimKilledAt = now();
  await at(SECONDS * 0.3);
  await fault(`start ${VICTIM} again`, () => compose('start', VICTIM));
  // Replies that reach toy-api-2 from here on wait in its handler, their keys claimed, until the
  // kill: each leaves a key held by a request that died before its write. Their retries get 409
  // until the dead request's lease runs out (10 s, no longer renewed), then store the reply once.
  // (The rule takes about 2 s to set: a `docker exec` of node.)
  await at(SECONDS * 0.4);
  await fault('toy-api-2 holds replies in their handler', () =>
    replicaFaults('toy-api-2', {
      rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'delay', delay_ms: 30_000, times: 1000 }],
    }),
  );
  await at(SECONDS * 0.48);
  await fault('SIGKILL toy-api-2 (left down)', () => compose('kill', '-s', 'SIGKILL', 'toy-api-2'));
  const redis = await redisNow(); // looked up before the fault, so that the fault is on time
  await at(SECONDS * 0.7);
  await fault('restart Redis', async () => {
    const started = now();
    const restart = compose('restart', 'redis').then(() =>
      console.log(`chaos: \`restart redis\` returned after ${(now() - started).toFixed(1)} s`),
    );
    const back = await redisAnswersAgain(redis.container, redis.runId);
    await restart;
    return back;
  });
}

// ---------------------------------------------------------------------------------------------
// The sick phase, after the agents: the toy API left up answers half of GET /employees/{id} with
// 503 (a seeded fault rule: sick, not dead). The three gateways count into one breaker in Redis:
// it opens for all of them, calls fail at once without reaching the API, and once the API is
// well again one probe closes it. Its calls are apart from the agents' (check 2 is theirs).

/** One get_employee call as 2026-07-28 sends it; the balancer's X-Served-By says which gateway. */
async function oneCall() {
  const message = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'get_employee',
      arguments: { employee_id: 'e-05' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        // The upstream report on a success too: its attempts are counted below.
        'agentwire.dev/upstream': true,
      },
    },
  };
  const r = await rpc(message, {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'get_employee',
  });
  return {
    ok: r.outcome === 'ok',
    refused: r.result?._meta?.['agentwire.dev/upstream']?.breaker === 'open',
    attempts: r.result?._meta?.['agentwire.dev/upstream']?.attempts,
    by: r.headers?.get('x-served-by') ?? undefined,
  };
}

async function setFaults(rules) {
  const response = await fetch(`${API}/admin/faults`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ seed: 40, rules }),
  });
  if (!response.ok) throw new Error(`setting faults failed: HTTP ${response.status} ${await response.text()}`);
}

/** Each gateway's breaker state as its /metrics says, scraped through the balancer until all three answered. */
async function breakerStates() {
  const states = new Map();
  const metrics = new URL('/metrics', MCP);
  for (let tries = 0; tries < 60 && states.size < 3; tries++) {
    try {
      const response = await fetch(metrics, { headers: { authorization: `Bearer ${TOKEN}` } });
      const by = response.headers.get('x-served-by');
      const text = await response.text();
      const state = /mcp_gateway_upstream_breaker_state\{upstream="default"\} (\d)/.exec(text)?.[1];
      if (by && state !== undefined) states.set(by, Number(state));
    } catch {}
  }
  return Object.fromEntries(states);
}

async function sickPhase() {
  await setFaults([
    { method: 'GET', path: '/employees/{employee_id}', action: 'status', status: 503, probability: 0.5, times: 10_000 },
  ]);
  const started = now();
  let sent = 0;
  let refusedAt;
  // Polly's thresholds: 10% failures over 30 s once 100 calls. The window still holds the agents'
  // healthy calls of the last 30 s (a thousand or so), which the sick ones must outweigh.
  while (sent < 3000 && refusedAt === undefined) {
    const calls = await Promise.all(Array.from({ length: 8 }, () => oneCall()));
    sent += calls.length;
    if (calls.some((c) => c.refused)) refusedAt = now();
  }
  // While it is open, every replica refuses without sending: no attempt reaches the API. (A
  // replica trusts a closed state it heard for 250 ms: past that, it asks Redis.)
  await sleep(400);
  const whileOpen = await Promise.all(Array.from({ length: 12 }, () => oneCall()));
  const opened = await breakerStates();
  await setFaults([]);
  // Well again: after the break (UPSTREAM_BREAKER_BREAK_MS, 5 s) one probe closes it.
  let closedAt;
  const until = Date.now() + 20_000;
  while (closedAt === undefined && Date.now() < until) {
    const call = await oneCall();
    if (call.ok) closedAt = now();
    else await sleep(250);
  }
  const after = await Promise.all(Array.from({ length: 6 }, () => oneCall()));
  return {
    sentToOpen: sent,
    openedAfterSeconds: refusedAt === undefined ? undefined : refusedAt - started,
    whileOpen,
    opened,
    closedAfterSeconds: closedAt === undefined || refusedAt === undefined ? undefined : closedAt - refusedAt,
    after,
  };
}

// ---------------------------------------------------------------------------------------------

async function api(path) {
  for (let tries = 0; tries < 20; tries++) {
    try {
      const response = await fetch(`${API}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
      if (response.ok) return await response.json();
    } catch {}
    await sleep(300);
  }
  throw new Error(`GET ${path} kept failing`);
}

async function triageReplyCount() {
  const urgent = await api('/emails?date=2026-06-10&urgent=true&limit=50');
  let total = 0;
  for (const e of urgent.data) total += (await api(`/emails/${e.id}/replies`)).data.length;
  return total;
}

async function main() {
  const triageRepliesBefore = await triageReplyCount();
  const agents = [
    ...Array.from({ length: 8 }, (_, i) => sessionAgent(i)),
    ...Array.from({ length: 8 }, (_, i) => statelessAgent(i)),
    ...Array.from({ length: 4 }, (_, i) => replyAgent(i)),
    ...Array.from({ length: 2 }, (_, i) => triageAgent(i)),
    ...Array.from({ length: 2 }, (_, i) => taskAgent(i)),
    ...Array.from({ length: 20 }, (_, i) => noteAgent(i)),
  ];
  const plan = faultPlan();
  await sleep(SECONDS * 1000);
  running = false;
  await plan;
  const results = await Promise.all(agents);
  const sick = await sickPhase();
  const report = await check(results, triageRepliesBefore, sick);
  if (env.CHAOS_REPORT) writeFileSync(env.CHAOS_REPORT, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(report.checks.every((c) => c.ok) ? 0 : 1);
}

/** A client-credentials token from the (restarted) authorization server, tried on the gateway. */
async function newToken() {
  for (let tries = 0; tries < 30; tries++) {
    try {
      const answer = await fetch(`${AUTH}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`agentwire-scripts:${CLIENT_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: MCP, scope: 'emails:read' }),
      });
      const token = answer.ok ? (await answer.json()).access_token : undefined;
      if (token) {
        const call = await fetch(MCP, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'server/discover',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'server/discover',
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          }),
        });
        return {
          ok: call.status === 200,
          detail: `token after ${tries + 1} tries; the gateway answered ${call.status}`,
        };
      }
    } catch {}
    await sleep(500);
  }
  return { ok: false, detail: 'no token in 15 s' };
}

async function check(results, triageRepliesBefore, sick) {
  const checks = [];
  const add = (name, ok, detail) => checks.push({ name, ok, detail });

  // 1. Every reply asked for is stored exactly once (once at most when the agent gave up).
  const replyAgents = results.filter((r) => r.kind === 'reply');
  let asked = 0;
  let unknown = 0;
  const wrong = [];
  const wrongKeys = [];
  for (const r of replyAgents) {
    const stored = (await api(`/emails/${r.emailId}/replies`)).data;
    for (const a of r.asked) {
      asked++;
      const copies = stored.filter((x) => x.body === a.body);
      if (a.outcome === 'ok' ? copies.length !== 1 : copies.length > 1) {
        wrong.push(`${a.key}: ${a.outcome}, stored ${copies.length}x`);
        wrongKeys.push({ key: a.key, copies });
      }
      if (a.outcome !== 'ok') unknown++;
    }
  }
  const triageRuns = results.filter((r) => r.kind === 'triage').flatMap((r) => r.runs);
  const triageOk = triageRuns.filter((r) => r.code === 0).length;
  const triageReplies = (await triageReplyCount()) - triageRepliesBefore;
  // CHAOS_STORIES=N prints the stories of the first N keys even when every reply is right.
  const shown = replyAgents.flatMap((r) => r.asked).slice(0, Number(env.CHAOS_STORIES ?? 0));
  if (wrongKeys.length > 0 || triageReplies > triageRuns.length || shown.length > 0) {
    await printKeyStories([...wrongKeys, ...shown.map((a) => ({ key: a.key, copies: undefined }))]);
  }
  add(
    'every reply asked for is stored exactly once',
    wrong.length === 0 && triageReplies >= triageOk && triageReplies <= triageRuns.length,
    `${asked} replies by the reply agents (${unknown} gave up, stored at most once), ${wrong.length} wrong${wrong.length ? `: ${wrong.slice(0, 3).join('; ')}` : ''}; ` +
      `${triageRuns.length} triage runs, ${triageOk} finished, ${triageReplies} replies stored by them`,
  );

  // 2. Every tool call succeeded, or failed only after retries that stayed inside its deadline.
  // A reply whose first request was cut mid-way (its replica killed) leaves its key claimed, and
  // retries get 409 meanwhile; but only a live request renews the claim, so the key frees within
  // the toy API's lease (10 s), well inside a call's deadline, and the retry then stores it. Not
  // excused: such a reply that never got through fails this check.
  // A call whose deadline passed before Redis had been answering for RECONNECT_S (the gateways'
  // reconnect backoff is at most 2 s) could not have succeeded, whatever the gateway did: it is
  // counted apart, with the outage it fell in. Every other failure fails the check.
  const redis = faults.find((f) => f.name === 'restart Redis');
  const RECONNECT_S = 3;
  const storeDown = (started, deadlineS) =>
    redis !== undefined &&
    started >= redis.t &&
    started + deadlineS < (redis.back ?? Number.POSITIVE_INFINITY) + RECONNECT_S;
  const outlived = calls.filter((c) => c.outcome === 'deadline' && storeDown(c.started, CALL_DEADLINE_MS / 1000));
  // A keyless export start cut upstream: its outcome unknown, said so, and started again (check 5).
  const unknownStarts = calls.filter((c) => c.outcome === 'unknown' && c.tool === 'export_emails');
  const failed = calls.filter((c) => c.outcome !== 'ok' && !outlived.includes(c) && !unknownStarts.includes(c));
  const retried = calls.filter((c) => c.outcome === 'ok' && c.attempts > 1);
  const triageOutlived = triageRuns.filter((r) => r.code === 4 && storeDown(r.started, TRIAGE_DEADLINE_S));
  // Replies whose key a request cut by the kill still held (toy-api-2 holds replies in their
  // handler before it dies): how many met a 409 for it, and how many of those got through anyway.
  const heldKeys = new Set(
    attempts.filter((a) => a.tool === 'reply_to_email' && /still being processed/.test(a.why ?? '')).map((a) => a.key),
  );
  const heldFailed = calls.filter(
    (c) => c.tool === 'reply_to_email' && c.outcome !== 'ok' && /still being processed/.test(c.why ?? ''),
  ).length;
  // The same for a triage run: the agent repeats a reply whose key is held (409) until its
  // deadline, so a key freed by the lease lets it finish.
  const triageFailed = triageRuns.filter((r) => r.code !== 0 && !triageOutlived.includes(r));
  add(
    'every tool call succeeded, retrying retryable errors inside its deadline',
    failed.length === 0 && triageFailed.length === 0,
    `${calls.length} calls, ${retried.length} needed retries (at most ${Math.max(0, ...calls.map((c) => c.attempts))} attempts, ` +
      `longest ${Math.max(0, ...calls.map((c) => c.ended - c.started)).toFixed(1)} s of ${CALL_DEADLINE_MS / 1000} s), ` +
      `${heldKeys.size} replies met their key held by a request the kill cut (${
        heldKeys.size - heldFailed
      } got through after its lease), ` +
      `${unknownStarts.length} keyless export starts cut upstream (outcome unknown, said so, started again), ` +
      `${outlived.length} calls and ${triageOutlived.length} triage runs outlived by the Redis outage (Redis answered again ${
        redis?.back === undefined ? 'never' : `${(redis.back - redis.t).toFixed(1)} s after the restart began`
      }), ${failed.length} failed` +
      `${
        failed.length
          ? `: ${failed
              .slice(0, 3)
              .map((f) => `${f.agent} ${f.tool} ${f.outcome} ${f.why ?? ''}`)
              .join('; ')}`
          : ''
      }; ` +
      `triage runs that failed: ${triageFailed.map((r) => `exit ${r.code} ${r.error ?? ''}`).join('; ') || 'none'}`,
  );

  // The authorization server came back: a new token (a new sign-in of a script) works. The
  // agents' calls with the token from before the restart are in check 2.
  if (AUTH) {
    const fresh = await newToken();
    add(
      'after the authorization server restarted, a new token is issued and the gateway takes it',
      fresh.ok,
      fresh.detail,
    );
  }

  // 3. Sessions created before the first kill go on, on the other replicas.
  const sessions = results.filter((r) => r.kind === 'session');
  const firstFault = faults.find((f) => f.name !== 'restart the authorization server')?.t ?? 0;
  const goneOn = sessions.filter((s) => s.created < firstFault && !s.lost && s.okAfterFaults > 0);
  add(
    'every session created before the kills went on through them',
    goneOn.length === sessions.length,
    `${goneOn.length} of ${sessions.length} sessions (created before t=${firstFault.toFixed(1)} s) kept answering; ${sessions.filter((s) => s.lost).length} lost`,
  );

  // 4. GET streams cut by a kill resumed with Last-Event-ID, nothing lost or repeated.
  const cuts = sessions.reduce((n, s) => n + s.stream.cuts.length, 0);
  const bad = [];
  for (const s of sessions) {
    const ids = s.stream.ids;
    const dup = ids.length - new Set(ids).size;
    const stored = s.storedIds;
    const lost = stored ? stored.filter((id) => !ids.includes(id)) : [];
    const missing = stored ? lost.length : -1;
    if (dup > 0 || missing !== 0 || s.stream.resumedBad.length > 0) {
      bad.push(`${s.agent}: ${dup} repeated, ${missing} missing, ${s.stream.resumedBad.length} bad resumes`);
      // Its story, for the log: each missing id with what arrived around it and when, the cuts.
      for (const id of lost.slice(0, 5)) {
        const at = stored.indexOf(id);
        const around = [stored[at - 1], stored[at + 1]].map((near) => {
          const i = ids.indexOf(near);
          return near === undefined
            ? 'none'
            : `${near} ${i === -1 ? 'not received' : `at ${s.stream.at[i].toFixed(2)} s`}`;
        });
        console.log(
          `chaos: ${s.agent} missed ${id} (${at + 1} of ${stored.length} stored; before it ${around[0]}, after it ${around[1]})`,
        );
      }
      for (const cut of s.stream.cuts) {
        console.log(`chaos: ${s.agent} stream cut at ${cut.t.toFixed(2)} s after ${cut.lastId} (${cut.how})`);
      }
      for (const r of s.stream.resumedBad) console.log(`chaos: ${s.agent} resumed after ${r.after} with ${r.got}`);
    }
  }
  add(
    'every cut GET stream resumed with Last-Event-ID, no event lost or repeated',
    bad.length === 0 && cuts > 0,
    `${cuts} cuts, ${sessions.reduce((n, s) => n + s.stream.resumedOk, 0)} clean resumes, ` +
      `${sessions.reduce((n, s) => n + s.stream.ids.length, 0)} events received${bad.length ? `; ${bad.join('; ')}` : ''}`,
  );

  // 5. Every export asked for as a task ended completed with its file, looked at through any
  // replica; the one made on the killed replica (X-Served-By, from the balancer) and answered
  // after the kill by the others proves that a task outlives the replica that made it. A task
  // whose creation outlived its deadline (the store down) is counted apart, as in check 2.
  const kill = faults.find((f) => f.name === `SIGKILL ${VICTIM}`);
  const taskRuns = results.filter((r) => r.kind === 'task').flatMap((r) => r.tasks);
  const fileOk = (t) => t.file !== undefined && t.file.date === t.date && t.file.count === t.file.emails;
  const finished = taskRuns.filter((t) => (t.outcome === 'completed' || t.outcome === 'followed') && fileOk(t));
  const notCreated = taskRuns.filter((t) => t.outcome === 'deadline' && storeDown(t.created, CALL_DEADLINE_MS / 1000));
  const unfinished = taskRuns.filter((t) => !finished.includes(t) && !notCreated.includes(t));
  // The last one may still have been running when the agents stopped: polled to its end all the same.
  const acrossKill = finished.filter((t) => kill && t.created < kill.t && t.ended !== undefined && t.ended > kill.t);
  // Made on the killed replica, answered after the kill by the others: a task outlives its replica.
  const survivedKill = acrossKill.filter(
    (t) => t.createdBy === VICTIM && [...t.answeredBy].some((by) => by && by !== VICTIM),
  );
  add(
    'every export asked for as a task ended completed with its file, whichever replica answered; one made on the killed replica outlived it',
    unfinished.length === 0 && taskRuns.length > 0 && survivedKill.length > 0,
    `${taskRuns.length} exports, ${finished.length} completed (${finished.filter((t) => t.outcome === 'followed').length} followed without a task while the store was down; ` +
      `${acrossKill.length} created before ${VICTIM} was killed and ended after, ${survivedKill.length} of them made on ${VICTIM} and answered after its kill by ${[...new Set(survivedKill.flatMap((t) => [...t.answeredBy]))].filter(Boolean).join(' and ') || 'none'}), ` +
      `${Math.max(0, ...finished.map((t) => t.looks ?? 0))} looks at most, ${notCreated.length} not created inside the Redis outage, ` +
      `${unfinished.length} unfinished${
        unfinished.length
          ? `: ${unfinished
              .slice(0, 3)
              .map((t) => `${t.taskId ?? 'no task'} ${t.outcome} ${t.why ?? ''}`)
              .join('; ')}`
          : ''
      }`,
  );

  // 6. Every note written through the gateway exists exactly once: POST /notes does not dedupe,
  // so a second copy would be a re-issued call the gateway ran twice.
  const noteRuns = results.filter((r) => r.kind === 'note').flatMap((r) => r.notes);
  const stored = (await api(`/notes?prefix=${encodeURIComponent(`chaos ${RUN} note `)}`)).data;
  const copies = new Map();
  for (const n of stored) copies.set(n.text, (copies.get(n.text) ?? 0) + 1);
  const duplicates = noteRuns.filter((n) => (copies.get(n.text) ?? 0) > 1);
  const missing = noteRuns.filter((n) => n.outcome === 'written' && (copies.get(n.text) ?? 0) !== 1);
  const givenUp = noteRuns.filter((n) => n.outcome !== 'written');
  add(
    'every note written through the gateway exists exactly once (the API does not dedupe; the gateway does, by key)',
    duplicates.length === 0 && missing.length === 0 && givenUp.length === 0 && noteRuns.length > 0,
    `${noteRuns.length} notes by 20 agents, ${noteRuns.reduce((s, n) => s + n.writes, 0)} writes, ` +
      `${noteRuns.reduce((s, n) => s + n.reissues, 0)} re-issues, ${noteRuns.filter((n) => n.replayed).length} answered by a replay, ` +
      `${noteRuns.filter((n) => n.reconciled > 0).length} looked up after an unknown outcome, ` +
      `${duplicates.length} duplicates, ${missing.length} missing, ${givenUp.length} given up${
        [...duplicates, ...missing, ...givenUp].length
          ? `: ${[...duplicates, ...missing, ...givenUp]
              .slice(0, 3)
              .map((n) => `${n.text} ${n.outcome} x${copies.get(n.text) ?? 0} ${n.why ?? ''}`)
              .join('; ')}`
          : ''
      }`,
  );

  // 7. A sick upstream opens the breaker on every gateway at once, and a probe closes it again.
  const refusedUnsent = sick.whileOpen.filter((c) => c.refused && c.attempts === 0);
  add(
    'a sick upstream (half its calls 503) opened the shared breaker on all three gateways; calls then failed at once, unsent; once it was well, a probe closed it',
    sick.openedAfterSeconds !== undefined &&
      refusedUnsent.length === sick.whileOpen.length &&
      Object.keys(sick.opened).length === 3 &&
      Object.values(sick.opened).every((state) => state === 2) &&
      sick.closedAfterSeconds !== undefined &&
      sick.after.every((c) => c.ok),
    `opened after ${sick.sentToOpen} calls (${sick.openedAfterSeconds?.toFixed(1) ?? 'never'} s); ` +
      `${refusedUnsent.length} of ${sick.whileOpen.length} calls while open refused unsent, by ${[...new Set(sick.whileOpen.map((c) => c.by))].join(', ')}; ` +
      `breaker state per gateway ${JSON.stringify(sick.opened)}; closed ${sick.closedAfterSeconds?.toFixed(1) ?? 'never'} s after it opened; ` +
      `${sick.after.filter((c) => c.ok).length} of ${sick.after.length} calls after that ok`,
  );

  // The window each fault opened: from the fault to its last failed attempt, and how many failed.
  const windows = faults.map((f, k) => {
    const until = faults[k + 1]?.t ?? Number.POSITIVE_INFINITY;
    const failures = attempts.filter((a) => !a.ok && a.t >= f.t && a.t < until);
    const streamCuts = sessions.flatMap((s) => s.stream.cuts).filter((c) => c.t >= f.t && c.t < until).length;
    return {
      fault: f.name,
      at: Number(f.t.toFixed(1)),
      failedAttempts: failures.length,
      windowSeconds: failures.length ? Number((Math.max(...failures.map((a) => a.t)) - f.t).toFixed(2)) : 0,
      streamCuts,
      ...(f.back === undefined ? {} : { answeringAgainAfterSeconds: Number((f.back - f.t).toFixed(2)) }),
      reasons: [...new Set(failures.map((a) => a.why))].slice(0, 4),
    };
  });

  const report = {
    seconds: SECONDS,
    agents: { session: 8, stateless: 8, reply: 4, triage: 2, task: 2, note: 20 },
    calls: calls.length,
    attempts: attempts.length,
    triageRuns: triageRuns.length,
    faults: windows,
    checks,
  };
  print(report);
  return report;
}

function print(report) {
  const pad = (s, n) => String(s).padEnd(n);
  console.log(
    `\nchaos run: ${report.seconds} s, 44 agents (8 sessions with GET streams, 8 stateless, 4 replying, 2 triage, 2 exporting as tasks, 20 writing notes), ${report.calls} tool calls, ${report.attempts} attempts, ${report.triageRuns} triage runs\n`,
  );
  console.log(`${pad('fault', 34)}${pad('at s', 7)}${pad('window s', 10)}${pad('failed attempts', 17)}stream cuts`);
  for (const f of report.faults) {
    console.log(
      `${pad(f.fault, 34)}${pad(f.at, 7)}${pad(f.windowSeconds, 10)}${pad(f.failedAttempts, 17)}${f.streamCuts}`,
    );
    if (f.answeringAgainAfterSeconds !== undefined)
      console.log(`  answering again after ${f.answeringAgainAfterSeconds} s`);
    if (f.reasons.length) console.log(`  why: ${f.reasons.join(' | ')}`);
  }
  console.log('');
  for (const c of report.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}\n     ${c.detail}`);
}

main().catch((error) => {
  console.error(`chaos: ${error.stack ?? error}`);
  process.exit(1);
});
