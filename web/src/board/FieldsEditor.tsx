import { useState } from 'react';
import { errorText, type Api } from '../api/client.js';
import type { Board, CustomField, CustomFieldOption } from '../api/types.js';
import { Dialog } from '../Dialog.js';
import { slug, textOn } from './fieldRules.js';

/** The types offered when a field is added, as people read them. */
const TYPES: ReadonlyArray<[string, string]> = [
  ['select', 'Select (one option)'], ['multi_select', 'Multi-select'], ['number', 'Number'], ['text', 'Text'], ['date', 'Date'],
  ['datetime', 'Date and time'], ['boolean', 'Checkbox'], ['user', 'Member'], ['url', 'URL'],
];

const DEFAULT_COLORS = ['#d73a4a', '#e99695', '#fbca04', '#0e8a16', '#1d76db', '#5319e7', '#6a737d'];


/** Options being edited: an existing option keeps its id; a new one gets one from its label when saved. */
interface OptionDraft {
  id?: string;
  label: string;
  color: string;
}

const toDrafts = (os: readonly CustomFieldOption[] | undefined): OptionDraft[] => (os ?? []).map((o) => ({ id: o.id, label: o.label, color: o.color ?? '' }));

/** Drafts as options: new ids from the labels (made distinct), colors only when set. */
function toOptions(drafts: readonly OptionDraft[]): CustomFieldOption[] {
  const used = new Set(drafts.flatMap((d) => (d.id ? [d.id] : [])));
  return drafts
    .filter((d) => d.label.trim() !== '')
    .map((d) => {
      let id = d.id;
      if (!id) {
        const base = slug(d.label);
        id = base;
        for (let i = 2; used.has(id); i++) id = `${base}-${i}`;
        used.add(id);
      }
      return { id, label: d.label.trim(), ...(d.color ? { color: d.color } : {}) };
    });
}

/** Option rows: label, color, up / down, remove, and "Add an option". */
function OptionsEditor(p: { fieldName: string; options: OptionDraft[]; onChange: (o: OptionDraft[]) => void }) {
  const set = (i: number, patch: Partial<OptionDraft>) => p.onChange(p.options.map((o, j) => (j === i ? { ...o, ...patch } : o)));
  const move = (i: number, d: -1 | 1) => {
    const j = i + d;
    if (j < 0 || j >= p.options.length) return;
    const next = [...p.options];
    [next[i], next[j]] = [next[j]!, next[i]!];
    p.onChange(next);
  };
  return (
    <fieldset className="field-options">
      <legend>Options of {p.fieldName}, in order</legend>
      <ol>
        {p.options.map((o, i) => (
          <li key={o.id ?? `new-${i}`}>
            <input aria-label={`Option ${i + 1} label`} value={o.label} maxLength={100} onChange={(e) => set(i, { label: e.target.value })} />
            <input aria-label={`Option ${i + 1} color`} type="color" value={o.color || '#6a737d'} onChange={(e) => set(i, { color: e.target.value })} />
            {o.color && (
              <span className="badge field" style={{ background: o.color, color: textOn(o.color) }}>
                {o.label || ' '}
              </span>
            )}
            <button type="button" className="secondary" aria-label={`Move option ${o.label || i + 1} up`} onClick={() => move(i, -1)} disabled={i === 0}>
              ↑
            </button>
            <button type="button" className="secondary" aria-label={`Move option ${o.label || i + 1} down`} onClick={() => move(i, 1)} disabled={i === p.options.length - 1}>
              ↓
            </button>
            <button type="button" className="secondary" aria-label={`Remove option ${o.label || i + 1}`} onClick={() => p.onChange(p.options.filter((_, j) => j !== i))}>
              ✕
            </button>
          </li>
        ))}
      </ol>
      <button type="button" className="secondary" onClick={() => p.onChange([...p.options, { label: '', color: DEFAULT_COLORS[p.options.length % DEFAULT_COLORS.length]! }])}>
        Add an option
      </button>
    </fieldset>
  );
}

/** One defined field: rename, edit its options (select kinds), save or delete. */
function FieldRow(p: { api: Api; field: CustomField; onChanged: () => void }) {
  const { field: f } = p;
  const [name, setName] = useState(f.name);
  const [options, setOptions] = useState<OptionDraft[]>(() => toDrafts(f.options));
  const [error, setError] = useState<string | null>(null);
  const selectKind = f.type === 'select' || f.type === 'multi_select';
  async function save() {
    setError(null);
    try {
      await p.api.updateCustomField(f.id, { ...(name !== f.name ? { name } : {}), ...(selectKind ? { options: toOptions(options) } : {}) });
      p.onChanged();
    } catch (e) {
      setError(errorText(e));
    }
  }
  async function remove() {
    if (!window.confirm(`Delete the field "${f.name}"? Cards keep their values as plain metadata.`)) return;
    try {
      await p.api.deleteCustomField(f.id);
      p.onChanged();
    } catch (e) {
      setError(errorText(e));
    }
  }
  return (
    <li className="field-row" aria-label={`Field ${f.name}`}>
      <div className="row">
        <label>
          Name
          <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} disabled={!f.can_edit} />
        </label>
        <span className="muted">
          {f.key} · {TYPES.find(([t]) => t === f.type)?.[1] ?? f.type}
        </span>
      </div>
      {selectKind && f.can_edit && <OptionsEditor fieldName={name} options={options} onChange={setOptions} />}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {f.can_edit && (
        <div className="row">
          <button type="button" onClick={() => void save()}>
            Save {name}
          </button>
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete {name}
          </button>
        </div>
      )}
    </li>
  );
}

/**
 * Board settings for custom fields (docs/web.md "Custom fields"): the fields of the board's scope
 * (its group's when shared, else the owner's own), each renamed, its options relabelled,
 * recolored, reordered, added or removed, and deleted; a new field is added by name and type (its
 * key is `cf.` + the name's slug). Writes go to `/api/v1/custom-fields`; `onChanged` reloads them.
 */
export function FieldsEditor(p: { api: Api; board: Board; fields: readonly CustomField[]; onClose: () => void; onChanged: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('select');
  const [options, setOptions] = useState<OptionDraft[]>([]);
  const [error, setError] = useState<string | null>(null);
  const selectKind = type === 'select' || type === 'multi_select';

  async function add() {
    setError(null);
    try {
      await p.api.createCustomField({
        key: `cf.${slug(name)}`, name: name.trim(), type,
        ...(selectKind ? { options: toOptions(options) } : {}),
        ...(p.board.group_id ? { group_id: p.board.group_id } : {}),
      });
      setName('');
      setOptions([]);
      p.onChanged();
    } catch (e) {
      setError(errorText(e));
    }
  }

  return (
    <Dialog title="Custom fields" onClose={p.onClose} wide>
      <p className="muted">
        {p.board.group_id ? "Fields of the board's group: every card of the boards shared with it." : 'Your fields: every card of your private boards.'}
      </p>
      <ul className="field-list">
        {p.fields.map((f) => (
          <FieldRow key={`${f.id}-${f.version}`} api={p.api} field={f} onChanged={p.onChanged} />
        ))}
      </ul>
      <form
        className="add-field"
        aria-label="Add a field"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim()) void add();
        }}
      >
        <h3>Add a field</h3>
        <div className="row">
          <label>
            Field name
            <input name="field-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          </label>
          <label>
            Type
            <select name="field-type" value={type} onChange={(e) => setType(e.target.value)}>
              {TYPES.map(([t, label]) => (
                <option key={t} value={t}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        </div>
        {selectKind && <OptionsEditor fieldName={name || 'the new field'} options={options} onChange={setOptions} />}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit">Add field</button>
      </form>
    </Dialog>
  );
}
