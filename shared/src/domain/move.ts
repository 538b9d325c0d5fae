import type { AppliedAction } from '../contracts/boards.js';
import { escapeKey, metadataPath } from '../store/keys.js';
import type { Update } from '../store/port.js';
import type { ColumnAction, ColumnDef } from './board.js';
import type { TaskDoc } from './task.js';
import { isMoverValue } from '../query/materialize.js';

/**
 * Card move as a pure computation (docs/boards.md "Card move"; docs/architecture.md §7):
 * the net effect of merge(exit(from), enter(to)), the ONE update that writes it and the applied
 * actions it reports. The boards service adds the conditional filter and the store call.
 */

/** Prefix of an action field naming a metadata key (`metadata.cf.priority`). */
export const METADATA_FIELD = 'metadata.';

/** Fields whose `clear` means the empty string: they always exist on a task. */
const ALWAYS_PRESENT = new Set(['status', 'path']);

/**
 * The net effect of a move on a task, keyed by action field (`status`, `assignee`, `path`,
 * `kickoff`, `deadline`, `metadata.<key>`): `set` values, `clear`ed fields, tags to add and remove.
 * A field is in at most one of `set` and `clear`; a tag in at most one of `addTags`, `removeTags`.
 */
export interface MoveEffect {
  set: Map<string, unknown>;
  clear: Set<string>;
  addTags: string[];
  removeTags: string[];
}

/**
 * merge(exit(from), enter(to)) (docs/architecture.md §7): exit actions of `from` first, then enter actions of
 * `to`; a later action on the same field wins, so enter wins on conflicts. Tags are decided per
 * tag: the enter side overrides the exit side, and within one side `add` beats `remove` (a tag
 * both removed and added is kept).
 */
export function mergeMoveActions(from: Pick<ColumnDef, 'actions'>, to: Pick<ColumnDef, 'actions'>): MoveEffect {
  const set = new Map<string, unknown>();
  const clear = new Set<string>();
  const tags = new Map<string, 'add' | 'remove'>();
  const side = (actions: ColumnAction[]) => {
    const decided = new Map<string, 'add' | 'remove'>();
    for (const a of actions) {
      if (a.field === 'tags') {
        for (const tag of tagValues(a.value)) {
          if (decided.get(tag) !== 'add') decided.set(tag, a.operation === 'add' ? 'add' : 'remove');
        }
      } else if (a.operation === 'clear') {
        set.delete(a.field);
        clear.add(a.field);
      } else {
        clear.delete(a.field);
        set.set(a.field, a.value);
      }
    }
    for (const [tag, op] of decided) tags.set(tag, op);
  };
  side(from.actions.filter((a) => a.trigger === 'exit'));
  side(to.actions.filter((a) => a.trigger === 'enter'));
  const pick = (op: 'add' | 'remove') => [...tags].filter(([, o]) => o === op).map(([t]) => t);
  return { set, clear, addTags: pick('add'), removeTags: pick('remove') };
}

function tagValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** The stored path of an action field (`metadata.app.sprint` → `metadata.app%2Esprint`). */
function storedPath(field: string): string {
  return field.startsWith(METADATA_FIELD) ? metadataPath(field.slice(METADATA_FIELD.length)) : field;
}

/** The value of an action field on a stored task (undefined when absent). */
function fieldValue(task: TaskDoc, field: string): unknown {
  if (field.startsWith(METADATA_FIELD)) return task.metadata[escapeKey(field.slice(METADATA_FIELD.length))];
  return task[field];
}

/** A move computed against one version of a task. */
export interface MovePlan {
  /**
   * The ONE store update: `$set` of every set field (even when unchanged, so a concurrent change
   * cannot leave the card between columns), of `tags` when they change, and of the update stamp;
   * `$unset` of cleared optional fields.
   */
  update: Update;
  /** The task as it would be after the update. */
  after: TaskDoc;
  /** What actually changes, in the applied-action form of docs/boards.md "Card move": sets first, then added, then removed tags. */
  applied: AppliedAction[];
  /** True when the update sets `tags` (a value computed from `task`, so the write must be conditional on them). */
  tagsChanged: boolean;
}

/**
 * Applies a move effect to `task` (not mutated; `after` shares its unchanged values). Set, add, remove and clear are idempotent:
 * re-applying a plan to its own `after` yields no applied actions. A cleared `status` or `path`
 * becomes `""`; other cleared fields are removed (reported as `set` without `to`). Only fields that
 * change are reported; `add_tags` / `remove_tags` list the tags actually added or removed.
 */
export function planMove(task: TaskDoc, effect: MoveEffect, userId: string, now: Date): MovePlan {
  // A new top level and metadata object: only those are changed below (tags get a new array).
  const after: TaskDoc = { ...task, metadata: { ...task.metadata } };
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  const applied: AppliedAction[] = [];
  const write = (field: string, to: unknown) => {
    const from = fieldValue(task, field);
    if (field.startsWith(METADATA_FIELD)) {
      const key = escapeKey(field.slice(METADATA_FIELD.length));
      if (to === undefined) delete after.metadata[key];
      else after.metadata[key] = to;
    } else if (to === undefined) delete after[field];
    else after[field] = to;
    if (to === undefined) $unset[storedPath(field)] = '';
    else $set[storedPath(field)] = to;
    if (from !== to && JSON.stringify(from) !== JSON.stringify(to)) applied.push(setAction(field, from, to));
  };
  // `field = me()` column actions set the mover (docs/query-language.md "Functions")
  for (const [field, value] of effect.set) write(field, isMoverValue(value) ? userId : value);
  for (const field of effect.clear) write(field, ALWAYS_PRESENT.has(field) ? '' : undefined);

  const removed = effect.removeTags.filter((t) => task.tags.includes(t));
  const added = effect.addTags.filter((t) => !task.tags.includes(t));
  const tagsChanged = removed.length > 0 || added.length > 0;
  if (tagsChanged) {
    after.tags = [...task.tags.filter((t) => !removed.includes(t)), ...added];
    $set.tags = after.tags;
  }
  if (added.length > 0) applied.push({ op: 'add_tags', value: added });
  if (removed.length > 0) applied.push({ op: 'remove_tags', value: removed });

  after.updated_at = $set.updated_at = now.toISOString();
  after.updated_by = $set.updated_by = userId;
  const update: Update = Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
  return { update, after, applied, tagsChanged };
}

function setAction(field: string, from: unknown, to: unknown): AppliedAction {
  const a: AppliedAction = { op: 'set', field };
  if (from !== undefined) a.from = from;
  if (to !== undefined) a.to = to;
  return a;
}
