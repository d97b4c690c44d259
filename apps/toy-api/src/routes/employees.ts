// Employees and their office days.
import { Employee, EmployeeId, EmployeeList, ListEmployeesQuery, OfficeDays } from '@agentwire/schemas';
import Type from 'typebox';
import { EMPLOYEES, findEmployee } from '../data/company.js';
import { EnvelopeError } from '../envelope-error.js';
import { type App, errorResponses } from '../route-context.js';

const IdParams = Type.Object({ employee_id: EmployeeId }, { additionalProperties: false });

function employeeOr404(id: string) {
  const employee = findEmployee(id);
  if (!employee) {
    throw new EnvelopeError(
      'not_found_error',
      `no employee '${id}'; ids run from e-01 to e-${String(EMPLOYEES.length).padStart(2, '0')} (GET /employees lists them)`,
    );
  }
  return employee;
}

export async function employeeRoutes(app: App): Promise<void> {
  app.get(
    '/employees',
    {
      schema: {
        operationId: 'list_employees',
        summary: 'List employees',
        description:
          'Lists the employees of Cardinal Energy with their id, name, team, title and office days. ' +
          'Filter by team. Use the ids (e-01, e-02, ...) with the other employee routes.',
        tags: ['employees'],
        // MCP clients of 2026-07-28 repeat `team` in an Mcp-Param-Team header (SEP-2243), so a
        // balancer in front of the gateway can route by team without reading the body.
        'x-mcp': { headers: { team: 'Team' } },
        querystring: ListEmployeesQuery,
        response: { 200: EmployeeList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { team, limit } = request.query;
      const matching = EMPLOYEES.filter((e) => team === undefined || e.team === team);
      return { data: matching.slice(0, limit ?? matching.length) };
    },
  );

  app.get(
    '/employees/:employee_id',
    {
      schema: {
        operationId: 'get_employee',
        summary: 'Get one employee',
        description: "Returns one employee by id ('e-05'), with team, title and office days.",
        tags: ['employees'],
        params: IdParams,
        response: { 200: Employee, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => employeeOr404(request.params.employee_id),
  );

  app.get(
    '/employees/:employee_id/office-days',
    {
      schema: {
        operationId: 'office_days',
        summary: "An employee's office days",
        description:
          "Returns the weekdays an employee ('e-05') works in the office, and how many per week. " +
          'Useful before proposing an in-person meeting.',
        tags: ['employees'],
        params: IdParams,
        response: { 200: OfficeDays, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const employee = employeeOr404(request.params.employee_id);
      return { employee_id: employee.id, days: employee.office_days, days_per_week: employee.office_days.length };
    },
  );
}
