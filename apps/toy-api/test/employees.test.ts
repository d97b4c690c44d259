import { describe, expect, it } from 'vitest';
import { STORES, startApi } from './support/toy-api.js';

describe.each(STORES)('employees (%s store)', (store) => {
  it('lists a dozen employees across three teams, each with office days', async () => {
    const api = await startApi(store);
    const { status, body } = await api.json('/employees');
    expect(status).toBe(200);
    expect(body.data).toHaveLength(12);
    expect(body.data[0].id).toBe('e-01');
    expect(new Set(body.data.map((e: { team: string }) => e.team))).toEqual(
      new Set(['firmware', 'analytics', 'legal']),
    );
    for (const e of body.data) expect(e.office_days.length).toBeGreaterThan(0);
  });

  it('filters by team and limits the count', async () => {
    const api = await startApi(store);
    const { body } = await api.json('/employees?team=legal&limit=2');
    expect(body.data).toHaveLength(2);
    for (const e of body.data) expect(e.team).toBe('legal');
  });

  it('explains bad query parameters the way a model can fix them', async () => {
    const api = await startApi(store);
    const cases: Array<[string, string]> = [
      ['/employees?team=sales', "$.team: must be one of ['firmware', 'analytics', 'legal'], got 'sales'"],
      ['/employees?limit=999', '$.limit: 999 is above maximum 50'],
      ['/employees?limit=two', '$.limit: expected integer, got string'],
      ['/employees?verbose=true', "$: unexpected property 'verbose' (allowed: ['team', 'limit'])"],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await api.json(path);
      expect(status).toBe(400);
      expect(body).toEqual({ error: { type: 'invalid_request_error', message } });
    }
  });

  it('gets one employee and their office days', async () => {
    const api = await startApi(store);
    const employee = await api.json('/employees/e-05');
    expect(employee.body).toMatchObject({ id: 'e-05', name: 'Ed Brandt', team: 'analytics' });
    const days = await api.json('/employees/e-05/office-days');
    expect(days.body).toEqual({
      employee_id: 'e-05',
      days: employee.body.office_days,
      days_per_week: employee.body.office_days.length,
    });
  });

  it('answers 404 not_found_error for an unknown id and 400 for a name instead of an id', async () => {
    const api = await startApi(store);
    const missing = await api.json('/employees/e-99/office-days');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({
      type: 'not_found_error',
      message: "no employee 'e-99'; ids run from e-01 to e-12 (GET /employees lists them)",
    });
    const name = await api.json(`/employees/${encodeURIComponent('Ed Brandt')}`);
    expect(name.status).toBe(400);
    expect(name.body.error.message).toBe("$.employee_id: 'Ed Brandt' does not match pattern ^e-\\d{2}$");
  });
});
