import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import type { Api } from '../api/client.js';
import type { BoardMember, CustomField } from '../api/types.js';
import { textOn, type FieldBadge } from './fieldRules.js';

export { fieldBadges, namesToKeys, textOn, TYPE_OPERATORS, type FieldBadge } from './fieldRules.js';

/*
 * Custom fields in the web board (docs/custom-fields.md, docs/web.md "Custom fields"): the
 * definitions of the board's scope, read once per board page, a widget per type in the card
 * detail, badges by name and color on cards, and field names in the filter box.
 */

/** The board's custom field definitions, and a reload after they change. */
export interface BoardFields {
  fields: readonly CustomField[];
  reload: () => void;
}

const NONE: BoardFields = { fields: [], reload: () => {} };

/** The definitions of the board page's scope, for the cards it draws. */
export const CustomFieldsContext = createContext<BoardFields>(NONE);

/** Reads the custom fields of board `boardId` (none while loading or when the read fails). */
export function useCustomFields(api: Api, boardId: string): BoardFields {
  const [fields, setFields] = useState<readonly CustomField[]>([]);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    api.listCustomFields(boardId).then(
      (r) => live && setFields(r.data),
      () => live && setFields([]),
    );
    return () => {
      live = false;
    };
  }, [api, boardId, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { fields, reload };
}

/** The board page's definitions (from {@link CustomFieldsContext}). */
export const useBoardFields = (): BoardFields => useContext(CustomFieldsContext);

/** One badge on a card. */
export function Badge({ badge }: { badge: FieldBadge }) {
  const style = badge.color ? { background: badge.color, color: textOn(badge.color) } : undefined;
  return (
    <span className="badge field" title={`${badge.name}: ${badge.text}`} style={style} data-testid="field-badge">
      {badge.text}
    </span>
  );
}

/** The value of one field as its widget edits it: `undefined` = not set. */
export type FieldValue = unknown;

/**
 * The widget of one defined field in the card detail's edit form: a select for select fields
 * (options in their order), checkboxes for multi_select, a number input, a date or date-time
 * picker, a checkbox, a member picker for user fields, a URL or text input.
 */
export function FieldWidget(p: { field: CustomField; value: FieldValue; members: readonly BoardMember[]; onChange: (v: FieldValue) => void }) {
  const { field: f, value: v } = p;
  const name = `cf-${f.key.slice(3)}`;
  switch (f.type) {
    case 'select':
      return (
        <label>
          {f.name}
          <select name={name} value={typeof v === 'string' ? v : ''} onChange={(e) => p.onChange(e.target.value === '' ? undefined : e.target.value)}>
            <option value="">—</option>
            {(f.options ?? []).map((o) => (
              <option key={o.id} value={o.id}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
      );
    case 'multi_select': {
      const chosen = Array.isArray(v) ? (v as string[]) : [];
      return (
        <fieldset className="field-options">
          <legend>{f.name}</legend>
          {(f.options ?? []).map((o) => (
            <label key={o.id} className="inline">
              <input
                type="checkbox"
                name={`${name}-${o.id}`}
                checked={chosen.includes(o.id)}
                onChange={(e) => p.onChange(e.target.checked ? [...chosen, o.id] : chosen.filter((x) => x !== o.id))}
              />
              {o.label}
            </label>
          ))}
        </fieldset>
      );
    }
    case 'number':
      return (
        <label>
          {f.name}
          <input name={name} type="number" step="any" value={typeof v === 'number' ? String(v) : ''} onChange={(e) => p.onChange(e.target.value === '' ? undefined : Number(e.target.value))} />
        </label>
      );
    case 'date':
      return (
        <label>
          {f.name}
          <input name={name} type="date" value={typeof v === 'string' ? v : ''} onChange={(e) => p.onChange(e.target.value === '' ? undefined : e.target.value)} />
        </label>
      );
    case 'datetime':
      return (
        <label>
          {f.name}
          <input
            name={name}
            type="datetime-local"
            value={typeof v === 'string' ? v.slice(0, 16) : ''}
            onChange={(e) => p.onChange(e.target.value === '' ? undefined : new Date(e.target.value).toISOString())}
          />
        </label>
      );
    case 'boolean':
      return (
        <label className="inline">
          <input name={name} type="checkbox" checked={v === true} onChange={(e) => p.onChange(e.target.checked)} />
          {f.name}
        </label>
      );
    case 'user':
      return (
        <label>
          {f.name}
          <select name={name} value={typeof v === 'string' ? v : ''} onChange={(e) => p.onChange(e.target.value === '' ? undefined : e.target.value)}>
            <option value="">Nobody</option>
            {p.members.map((m) => (
              <option key={m.id} value={m.id}>
                {m.username}
              </option>
            ))}
          </select>
        </label>
      );
    case 'url':
      return (
        <label>
          {f.name}
          <input name={name} type="url" value={typeof v === 'string' ? v : ''} onChange={(e) => p.onChange(e.target.value === '' ? undefined : e.target.value)} />
        </label>
      );
    default:
      return (
        <label>
          {f.name}
          <input name={name} value={typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v)} onChange={(e) => p.onChange(e.target.value === '' ? undefined : e.target.value)} />
        </label>
      );
  }
}
