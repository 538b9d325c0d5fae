import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { errorText, type Api } from '../api/client.js';
import type { BoardMember, TaskDetail } from '../api/types.js';
import { Dialog } from '../Dialog.js';
import { renderMarkdown } from '../markdown.js';
import { describeMetadata } from './state.js';
import { hasDraft, takeDraft, useDraft } from '../drafts.js';
import { LeaseInfo } from './LeaseInfo.js';
import { FieldWidget, useBoardFields } from './customFields.js';

/**
 * Card detail: title, sanitized markdown description, status, tags, assignee, metadata,
 * notes (add one), edit (PATCH, plus the board's custom fields, each with its widget, and
 * `app.points` through the metadata PATCH; a cleared field is deleted) and delete (two steps).
 * Defined fields are shown by their name and, for selects, their option labels.
 */
export function CardDetail(p: {
  api: Api;
  taskId: string;
  writable: boolean;
  /** The statuses the board's columns set (the status field offers these). */
  statuses: readonly string[];
  /** The board's people: the assignee is picked from them by name. */
  members: readonly BoardMember[];
  /** The open sprints by id, so the card's sprint is shown by its title. */
  sprints?: ReadonlyArray<{ id: string; title: string }>;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { api, taskId } = p;
  const [task, setTask] = useState<TaskDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  // drafts kept when a session ended come back here (docs/web.md "Sessions")
  const [editing, setEditing] = useState(() => hasDraft(`card:${taskId}:title`) || hasDraft(`card:${taskId}:description`));
  const [note, setNote] = useState(() => takeDraft(`card:${taskId}:note`) ?? '');
  useDraft(`card:${taskId}:note`, note);
  const [confirmDelete, setConfirmDelete] = useState(false);

  const load = useCallback(async () => {
    try {
      setTask(await api.getTask(taskId));
    } catch (e) {
      setError(errorText(e));
    }
  }, [api, taskId]);
  useEffect(() => {
    void load();
  }, [load]);

  const run = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    }
  };

  async function addNote(e: FormEvent) {
    e.preventDefault();
    if (!note.trim()) return;
    if (await run(() => api.addNote(taskId, note))) {
      setNote('');
      await load();
    }
  }

  async function remove() {
    if (await run(() => api.deleteTask(taskId))) {
      p.onChanged();
      p.onClose();
    }
  }

  const { fields } = useBoardFields();
  const metadata = (task ? describeMetadata(task.metadata as Record<string, unknown>, (id) => p.sprints?.find((x) => x.id === id)?.title) : []).map((m) => {
    // a defined field by its name, an option by its label
    const f = fields.find((x) => x.key === m.key);
    if (!f) return m;
    const raw = (task!.metadata as Record<string, unknown>)[m.key];
    const label = (id: unknown) => f.options?.find((o) => o.id === id)?.label ?? String(id);
    const value = f.type === 'select' ? label(raw) : f.type === 'multi_select' && Array.isArray(raw) ? raw.map(label).join(', ') : f.type === 'user' ? (p.members.find((x) => x.id === raw)?.username ?? String(raw)) : m.value;
    return { ...m, label: f.name, value };
  });
  return (
    <Dialog title={task ? task.title : 'Card'} onClose={p.onClose} wide>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!task ? (
        <p aria-busy="true">Loading…</p>
      ) : editing ? (
        <EditForm
          task={task}
          statuses={p.statuses}
          members={p.members}
          onCancel={() => setEditing(false)}
          onSave={async (changes, meta) => {
            const ok = await run(async () => {
              if (Object.keys(changes).length) await api.updateTask(taskId, changes);
              for (const [k, v] of Object.entries(meta)) {
                if (v === undefined) await api.deleteMetadata(taskId, k);
                else await api.setMetadata(taskId, k, v);
              }
            });
            if (ok) {
              setEditing(false);
              await load();
              p.onChanged();
            }
          }}
        />
      ) : (
        <div className="detail">
          <LeaseInfo api={api} task={task} members={p.members} writable={p.writable} onReleased={() => void load().then(p.onChanged)} />
          <dl className="fields">
            <dt>Status</dt>
            <dd data-testid="detail-status">{task.status}</dd>
            <dt>Tags</dt>
            <dd>{task.tags.length ? task.tags.join(', ') : '—'}</dd>
            <dt>Assignee</dt>
            <dd data-testid="detail-assignee">{task.assignee ? (p.members.find((m) => m.id === task.assignee)?.username ?? task.assignee) : '—'}</dd>
            <dt>Kickoff</dt>
            <dd data-testid="detail-kickoff">{task.kickoff ? task.kickoff.slice(0, 10) : '—'}</dd>
            <dt>Deadline</dt>
            <dd data-testid="detail-deadline">{task.deadline ? task.deadline.slice(0, 10) : '—'}</dd>
            <dt>Linked items</dt>
            <dd>
              {task.linkedTo.length === 0 && !task.derivedFrom ? (
                '—'
              ) : (
                <ul className="meta" data-testid="linked-items">
                  {task.derivedFrom && (
                    <li>
                      derived from {task.derivedFrom.title} <span className="status-pill">{task.derivedFrom.status}</span>
                    </li>
                  )}
                  {task.linkedTo.map((l) => (
                    <li key={l.id}>
                      {l.title} <span className="status-pill">{l.status}</span>
                    </li>
                  ))}
                </ul>
              )}
            </dd>
            <dt>Metadata</dt>
            <dd>
              {metadata.length === 0 ? (
                '—'
              ) : (
                <ul className="meta" data-testid="detail-metadata">
                  {metadata.map((m) => (
                    <li key={m.key} title={m.key}>
                      {m.label}: {m.value}
                    </li>
                  ))}
                </ul>
              )}
            </dd>
          </dl>
          <h3>Description</h3>
          {task.description ? (
            <div className="markdown" data-testid="description" dangerouslySetInnerHTML={{ __html: renderMarkdown(task.description) }} />
          ) : (
            <p className="muted">No description.</p>
          )}
          <h3>Notes ({task.notes.length})</h3>
          <ul className="notes">
            {task.notes.map((n) => (
              <li key={n.id}>
                <div className="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(n.content) }} />
                <span className="muted">{new Date(n.created_at).toLocaleString()}</span>
              </li>
            ))}
          </ul>
          {p.writable && (
            <>
              <form onSubmit={addNote} className="add-note">
                <label>
                  Add a note (markdown)
                  <textarea name="note" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
                </label>
                <button type="submit">Add note</button>
              </form>
              <div className="row">
                <button type="button" onClick={() => setEditing(true)}>
                  Edit
                </button>
                {confirmDelete ? (
                  <>
                    <button type="button" className="danger" onClick={() => void remove()}>
                      Confirm delete
                    </button>
                    <button type="button" className="secondary" onClick={() => setConfirmDelete(false)}>
                      Keep it
                    </button>
                  </>
                ) : (
                  <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
                    Delete
                  </button>
                )}
              </div>
            </>
          )}
        </div>
      )}
    </Dialog>
  );
}

type Changes = { title?: string; description?: string; status?: string; tags?: string[]; assignee?: string; kickoff?: string; deadline?: string };

function EditForm(p: { task: TaskDetail; statuses: readonly string[]; members: readonly BoardMember[]; onCancel: () => void; onSave: (c: Changes, meta: Record<string, unknown>) => Promise<void> }) {
  const t = p.task;
  const md = t.metadata as Record<string, unknown>;
  const [title, setTitle] = useState(() => takeDraft(`card:${t.id}:title`) ?? t.title);
  const [description, setDescription] = useState(() => takeDraft(`card:${t.id}:description`) ?? t.description ?? '');
  useDraft(`card:${t.id}:title`, title !== t.title ? title : '');
  useDraft(`card:${t.id}:description`, description !== (t.description ?? '') ? description : '');
  const [status, setStatus] = useState(t.status);
  const [tags, setTags] = useState(t.tags.join(', '));
  const [assignee, setAssignee] = useState(t.assignee ?? '');
  const [kickoff, setKickoff] = useState(t.kickoff?.slice(0, 10) ?? '');
  const [deadline, setDeadline] = useState(t.deadline?.slice(0, 10) ?? '');
  const [priority, setPriority] = useState(md['cf.priority'] === undefined ? '' : String(md['cf.priority']));
  const [points, setPoints] = useState(md['app.points'] === undefined ? '' : String(md['app.points']));
  const { fields } = useBoardFields();
  const [custom, setCustom] = useState<Record<string, unknown>>(() => Object.fromEntries(fields.map((f) => [f.key, md[f.key]])));
  const priorityDefined = fields.some((f) => f.key === 'cf.priority');

  function submit(e: FormEvent) {
    e.preventDefault();
    const c: Changes = {};
    if (title !== t.title) c.title = title;
    if (description !== (t.description ?? '')) c.description = description;
    if (status !== t.status) c.status = status;
    const tagList = tags.split(',').map((x) => x.trim()).filter(Boolean);
    if (tagList.join(',') !== t.tags.join(',')) c.tags = tagList;
    if (assignee !== (t.assignee ?? '')) c.assignee = assignee;
    // Dates are days (YYYY-MM-DD, docs/tasks.md); "" clears. An unchanged day keeps the stored instant.
    if (kickoff !== (t.kickoff?.slice(0, 10) ?? '')) c.kickoff = kickoff;
    if (deadline !== (t.deadline?.slice(0, 10) ?? '')) c.deadline = deadline;
    const meta: Record<string, unknown> = {};
    const num = (s: string) => (s.trim() !== '' && Number.isFinite(Number(s)) ? Number(s) : s.trim());
    if (!priorityDefined && priority.trim() !== '' && priority !== String(md['cf.priority'] ?? '')) meta['cf.priority'] = num(priority);
    // defined fields: a changed value is set, a cleared one deleted
    for (const f of fields) {
      const v = custom[f.key];
      if (JSON.stringify(v) === JSON.stringify(md[f.key])) continue;
      if (v !== undefined || md[f.key] !== undefined) meta[f.key] = v;
    }
    if (points.trim() !== '' && points !== String(md['app.points'] ?? '')) meta['app.points'] = num(points);
    void p.onSave(c, meta);
  }

  return (
    <form className="edit-card" onSubmit={submit}>
      <label>
        Title
        <input name="title" required value={title} maxLength={500} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label>
        Description (markdown)
        <textarea name="description" rows={6} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <div className="row">
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setStatus(e.target.value)}>
            {[...p.statuses, ...(p.statuses.includes(t.status) ? [] : [t.status])].map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <label>
          Assignee
          <select name="assignee" value={assignee} onChange={(e) => setAssignee(e.target.value)}>
            <option value="">Nobody</option>
            {p.members.map((m) => (
              <option key={m.id} value={m.id}>
                {m.username}
              </option>
            ))}
            {assignee && !p.members.some((m) => m.id === assignee) && <option value={assignee}>{assignee}</option>}
          </select>
        </label>
      </div>
      <div className="row">
        <label>
          Kickoff
          <input name="kickoff" type="date" value={kickoff} onChange={(e) => setKickoff(e.target.value)} />
        </label>
        <label>
          Deadline
          <input name="deadline" type="date" value={deadline} onChange={(e) => setDeadline(e.target.value)} />
        </label>
      </div>
      <label>
        Tags (comma separated)
        <input name="tags" value={tags} onChange={(e) => setTags(e.target.value)} />
      </label>
      <div className="row">
        {!priorityDefined && (
          <label>
            Priority
            <input name="priority" value={priority} onChange={(e) => setPriority(e.target.value)} />
          </label>
        )}
        <label>
          Points
          <input name="points" type="number" step="any" min="0" value={points} onChange={(e) => setPoints(e.target.value)} />
        </label>
      </div>
      {fields.length > 0 && (
        <div className="row custom-fields" data-testid="custom-fields">
          {fields.map((f) => (
            <FieldWidget key={f.key} field={f} value={custom[f.key]} members={p.members} onChange={(v) => setCustom((c) => ({ ...c, [f.key]: v }))} />
          ))}
        </div>
      )}
      <div className="row">
        <button type="submit">Save</button>
        <button type="button" className="secondary" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
