import { brief, check, expectStatus } from '../expect';
import type { Http } from '../http';
import { short, type State } from '../state';
import { AREAS, type Tour } from '../steps';
import { waitUntil } from '../wait';

// An audit record written and read back, then the trail of what the earlier areas did.

interface AuditRecord {
  id: string;
  action: string;
  entityType: string;
  entityId: string;
  actorId: string | null;
}

export async function audit(tour: Tour, http: Http, state: State): Promise<void> {
  const owner = state.owner;
  await tour.area('audit', owner ? null : 'needs the owner session of identity', async (step) => {
    const { token } = owner!;
    let auditId = '';
    await step('write an audit record', async () => {
      const answer = await http.post<{ auditId: string; status: string }>('/v1/audit/records', {
        action: 'tour.visited', entityType: 'tour', entityId: state.runId, after: { areas: AREAS.length },
      }, token);
      expectStatus(answer, 202);
      check(answer.body.status === 'queued', `expected queued, got ${brief(answer)}`);
      auditId = answer.body.auditId;
      return `202 queued ${short(auditId)}`;
    });
    await step('read it back', async () => {
      const started = Date.now();
      const record = await waitUntil(`audit record ${auditId} stored`, async () => {
        const answer = await http.get<AuditRecord>(`/v1/audit/records/${auditId}`, token);
        if (answer.status === 404) return [undefined, '404'];
        expectStatus(answer, 200);
        return [answer.body, '200'];
      });
      check(record.action === 'tour.visited' && record.actorId === owner!.userId, `expected tour.visited by the owner, got ${JSON.stringify(record)}`);
      return `200 stored after ${Date.now() - started} ms`;
    });
    await step('the trail of the tour entity', async () => {
      const answer = await http.get<{ data: AuditRecord[] }>(`/v1/audit/records?entityType=tour&entityId=${state.runId}`, token);
      expectStatus(answer, 200);
      check(answer.body.data.some((record) => record.id === auditId), `expected ${auditId} in the trail, got ${brief(answer)}`);
      return `200 ${answer.body.data.length} record(s)`;
    });
    // What the earlier areas did, as the trail should show it (each only if its area got that far).
    const expected: [string, string][] = [['module.registry.installed', 'action=module.registry.installed']];
    if (state.contacts) expected.push(['data.crm.contacts.updated', `action=data.crm.contacts.updated&entityId=${state.contacts.ada}`]);
    if (state.files) expected.push(['files.file.rejected', `action=files.file.rejected&entityId=${state.files.eicar}`]);
    if (state.member) expected.push(['auth.role.assigned', `action=auth.role.assigned&entityId=${state.member.roleId}`]);
    // POST /users writes no record of its own; the request audit of every authenticated call does.
    if (state.witnessId) expected.push(['audit.api.called POST /v1/users', `action=audit.api.called&entityId=${encodeURIComponent('POST /v1/users')}`]);
    expected.push(['money.*', 'action=money.*']);
    await step('the trail shows the earlier steps', async () => {
      await waitUntil('the earlier steps in the trail', async () => {
        const absent: string[] = [];
        for (const [name, filter] of expected) {
          const answer = await http.get<{ data: AuditRecord[] }>(`/v1/audit/records?${filter}&page_size=1`, token);
          expectStatus(answer, 200);
          if (answer.body.data.length === 0) absent.push(name);
        }
        return [absent.length === 0 ? absent : undefined, `missing ${absent.join(', ')}`];
      });
      return `200 ${expected.map(([name]) => name).join(', ')}`;
    });
  });
}
