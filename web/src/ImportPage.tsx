import { useEffect, useRef, useState, type FormEvent } from 'react';
import { errorText, type Api } from './api/client.js';

/** One problem of an export, as the dry run and the job report it (docs/import-export.md). */
interface Problem {
  level: 'error' | 'warning';
  row?: number;
  card?: string;
  field: string;
  message: string;
}
interface Counts {
  cards_created: number;
  cards_updated: number;
  notes_created: number;
  sprints_created: number;
  columns: number;
}
/** The dry run's answer. */
interface Preview {
  board: { name: string; existing_board_id?: string; columns: Array<{ name: string; query: string }> };
  counts: Counts;
  problems: Problem[];
  unknown_users: string[];
  ignored_columns: string[];
}
/** The import job. */
interface Job {
  id: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  counts: Counts;
  board_id?: string;
  error?: { code: string; message: string };
}

const FORMATS = [
  { value: 'trello', label: 'Trello board (JSON export)' },
  { value: 'jira-csv', label: 'Jira issues (CSV export)' },
  { value: 'csv', label: 'CSV with a header row' },
  { value: 'board-json', label: 'Board export of this service (JSON)' },
];
/** How often a running job is read again (ms). */
const POLL_MS = 500;

const where = (p: Problem) => [p.row !== undefined ? `row ${p.row}` : '', p.card ? `card ${p.card}` : ''].filter(Boolean).join(', ') || '—';

/**
 * The Import page (`/import`, docs/web.md): pick a format and a file (and for CSV a board name),
 * check it with a dry run, which shows what would be created and every problem, and only then
 * import it; the job is followed until it is done, with a link to the new board.
 */
export function ImportPage({ api, navigate }: { api: Api; navigate: (path: string) => void }) {
  const [format, setFormat] = useState('trello');
  const [file, setFile] = useState<File | null>(null);
  const [boardName, setBoardName] = useState('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const body = async (dry_run: boolean) => ({
    format, data: await file!.text(), dry_run,
    ...(boardName.trim() !== '' ? { mapping: { board_name: boardName.trim() } } : {}),
  });

  async function check(e: FormEvent) {
    e.preventDefault();
    if (!file) return;
    setError(null);
    setJob(null);
    setPreview(null);
    setBusy(true);
    try {
      setPreview(await api.startImport<Preview>(await body(true)));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  async function follow(id: string) {
    try {
      const j = await api.getImport<Job>(id);
      setJob(j);
      if (j.state === 'queued' || j.state === 'running') timer.current = setTimeout(() => void follow(id), POLL_MS);
    } catch (err) {
      setError(errorText(err));
    }
  }

  async function start() {
    setError(null);
    setBusy(true);
    try {
      const j = await api.startImport<Job>(await body(false));
      setJob(j);
      void follow(j.id);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  const errors = preview?.problems.filter((p) => p.level === 'error') ?? [];
  const changeInput = () => {
    setPreview(null);
    setJob(null);
  };

  return (
    <section className="import" aria-labelledby="import-title">
      <h1 id="import-title">Import a board</h1>
      <form onSubmit={check}>
        <label>
          Format
          <select name="format" value={format} onChange={(e) => { setFormat(e.target.value); changeInput(); }}>
            {FORMATS.map((f) => (
              <option key={f.value} value={f.value}>{f.label}</option>
            ))}
          </select>
        </label>
        <label>
          File
          <input name="file" type="file" accept=".json,.csv,application/json,text/csv" onChange={(e) => { setFile(e.target.files?.[0] ?? null); changeInput(); }} />
        </label>
        <label>
          Board name (optional)
          <input name="board-name" maxLength={200} value={boardName} onChange={(e) => { setBoardName(e.target.value); changeInput(); }} />
        </label>
        <button type="submit" disabled={!file || busy}>Check the file</button>
      </form>
      {error && (
        <p role="alert" className="error">{error}</p>
      )}
      {preview && (
        <section aria-labelledby="preview-title" className="import-preview">
          <h2 id="preview-title">What the import would do</h2>
          <p>
            {preview.board.existing_board_id ? 'Update' : 'Create'} the board <strong>{preview.board.name}</strong> with {preview.counts.columns} columns
            ({preview.board.columns.map((c) => c.name).join(', ')}): {preview.counts.cards_created} new cards, {preview.counts.cards_updated} updated,{' '}
            {preview.counts.notes_created} notes, {preview.counts.sprints_created} sprints.
          </p>
          {preview.unknown_users.length > 0 && <p>Unknown users, left unassigned: {preview.unknown_users.join(', ')}</p>}
          {preview.ignored_columns.length > 0 && <p className="muted">Columns not read: {preview.ignored_columns.join(', ')}</p>}
          {preview.problems.length > 0 ? (
            <table aria-label="Problems">
              <thead>
                <tr><th scope="col">Level</th><th scope="col">Where</th><th scope="col">Field</th><th scope="col">Why</th></tr>
              </thead>
              <tbody>
                {preview.problems.map((p, i) => (
                  <tr key={i}><td>{p.level}</td><td>{where(p)}</td><td>{p.field}</td><td>{p.message}</td></tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p>No problems found.</p>
          )}
          {errors.length > 0 ? (
            <p role="status">{errors.length} card(s) cannot be imported; fix the file and check it again.</p>
          ) : (
            <button type="button" onClick={() => void start()} disabled={busy || (job !== null && job.state !== 'failed')}>Import</button>
          )}
        </section>
      )}
      {job && (
        <p role="status">
          {job.state === 'done' && job.board_id ? (
            <>
              Imported: {job.counts.cards_created} cards created, {job.counts.cards_updated} updated.{' '}
              <a href={`/boards/${encodeURIComponent(job.board_id)}`} onClick={(e) => { e.preventDefault(); navigate(`/boards/${encodeURIComponent(job.board_id!)}`); }}>Open the board</a>
            </>
          ) : job.state === 'failed' ? (
            `The import failed, nothing was written: ${job.error?.message ?? ''}`
          ) : (
            `Importing… (${job.state})`
          )}
        </p>
      )}
    </section>
  );
}
