import type { CustomField } from '../api/types.js';

/*
 * The pure rules of custom fields in the web board (docs/web.md "Custom fields"): badges of a
 * card's defined fields, each type's operators in the filter box, field names written as keys,
 * keys and option ids made from names. The components are in customFields.tsx and FieldsEditor.tsx.
 */

/** A badge a card shows for one defined field: the field's name, the value as people read it, a color for options. */
export interface FieldBadge {
  key: string;
  name: string;
  text: string;
  color?: string;
}

/** The option label of a select value (its id when no option has it). */
function labelOf(f: CustomField, id: unknown): { text: string; color?: string } {
  const o = f.options?.find((x) => x.id === id);
  return o ? { text: o.label, ...(o.color ? { color: o.color } : {}) } : { text: String(id) };
}

/**
 * The badges of a card's metadata for the defined fields that carry a value: select options (each
 * of a multi_select) by their label and color, booleans and URLs as the field's name (a true
 * box, a link), a member by name, other values as name and value (`Estimate 8`); undefined keys
 * are left to the card's other badges.
 */
export function fieldBadges(md: Record<string, unknown>, fields: readonly CustomField[], people?: ReadonlyMap<string, string>): FieldBadge[] {
  const out: FieldBadge[] = [];
  for (const f of fields) {
    const v = md[f.key];
    if (v === undefined || v === null) continue;
    if (f.type === 'select') out.push({ key: f.key, name: f.name, ...labelOf(f, v) });
    else if (f.type === 'multi_select' && Array.isArray(v)) for (const id of v) out.push({ key: f.key, name: f.name, ...labelOf(f, id) });
    else if (f.type === 'boolean') {
      if (v === true) out.push({ key: f.key, name: f.name, text: f.name });
    } else if (f.type === 'user') out.push({ key: f.key, name: f.name, text: people?.get(String(v)) ?? String(v) });
    else if (f.type === 'url') out.push({ key: f.key, name: f.name, text: f.name });
    else out.push({ key: f.key, name: f.name, text: `${f.name} ${typeof v === 'string' || typeof v === 'number' ? String(v).slice(0, 24) : JSON.stringify(v).slice(0, 24)}` });
  }
  return out;
}

/** Black or white text, whichever reads better on `hex` (`#rrggbb`). */
export function textOn(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#1b1f24' : '#ffffff';
}

/** The operators of each type in the filter box (docs/custom-fields.md "Operators by type"). */
export const TYPE_OPERATORS: Readonly<Record<string, readonly string[]>> = {
  number: ['=', '!=', '<', '<=', '>', '>=', 'IN', 'BETWEEN', 'IS NULL'],
  date: ['=', '!=', '<', '<=', '>', '>=', 'BETWEEN', 'IS NULL'],
  datetime: ['=', '!=', '<', '<=', '>', '>=', 'BETWEEN', 'IS NULL'],
  text: ['=', '!=', 'IN', '~', 'LIKE', 'ILIKE', 'IS NULL'],
  url: ['=', '!=', '~', 'LIKE', 'IS NULL'],
  select: ['=', '!=', 'IN', 'IS NULL'],
  user: ['=', '!=', 'IN', 'IS NULL'],
  boolean: ['=', '!=', 'IS NULL'],
  multi_select: ['CONTAINS', 'CONTAINS_ALL', 'IN', 'IS NULL'],
};

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The filter text with defined fields written by their name turned into their keys, so
 * `Priority = P1` is sent as `cf.priority = 'P1'` (the server reads a select's label as its
 * option): a name (any case) standing where a field stands becomes the key, and an unquoted word
 * after `=` / `!=` that is one of the field's option labels is quoted. Text inside quotes is left
 * alone; a name that is also a builtin field (`status`) is not rewritten.
 */
export function namesToKeys(text: string, fields: readonly CustomField[]): string {
  const builtins = new Set(['id', 'title', 'description', 'status', 'path', 'tags', 'assignee', 'kickoff', 'deadline', 'checkInCount', 'derivedFromId', 'created_at', 'created_by', 'updated_at', 'updated_by']);
  const named = fields.filter((f) => !builtins.has(f.name) && /^[\p{L}\p{N}_ -]+$/u.test(f.name)).sort((a, b) => b.name.length - a.name.length);
  if (named.length === 0) return text;
  // split into quoted and unquoted runs; only unquoted runs are rewritten
  const parts = text.split(/('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return part;
      let out = part;
      for (const f of named) {
        const re = new RegExp(`(^|[\\s(,])${escapeRe(f.name)}(?=\\s*(?:=|!=|<|>|~|!~|\\bIN\\b|\\bNOT\\b|\\bIS\\b|\\bLIKE\\b|\\bILIKE\\b|\\bCONTAINS|\\bBETWEEN\\b|\\bASC\\b|\\bDESC\\b|,|\\)|$))`, 'giu');
        out = out.replace(re, (_m, pre: string) => `${pre}${f.key}`);
        if (f.options?.length) {
          const labels = f.options.map((o) => escapeRe(o.label)).join('|');
          const value = new RegExp(`(${escapeRe(f.key)}\\s*(?:=|!=)\\s*)(${labels})(?=$|[\\s)])`, 'giu');
          out = out.replace(value, (_m, head: string, label: string) => `${head}'${label}'`);
        }
      }
      return out;
    })
    .join('');
}

/** A key or option id from a name: lower case letters, digits, `_` and `-` (`Story points` → `story_points`). */
export function slug(name: string): string {
  const s = name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return s || 'field';
}
