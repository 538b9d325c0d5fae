import { randomUUID } from 'node:crypto';
import { callerId, type Handler } from '@app/shared/bus';
import { CUSTOM_FIELDS_PER_OWNER_MAX, type CustomField, type CustomFieldOption, type CustomFieldsOps, type CustomFieldType } from '@app/shared/contracts';
import {
  boardScope, checkFieldValue, customFieldIndex, checkIfMatch, convertFieldValue, customFieldsOf, definitionsOf, groupScope, hasOptions, loadBoard, loadPrincipal, nextVersion,
  runWrite, taskUpdatedEvent, userScope, versionGuard, versionOf,
  type CustomFieldDoc, type GroupDoc, type HandlerFactories, type Principal, type ServiceDeps, type TaskDoc, type WriteUnit,
} from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, escapeKey, metadataPath, type BulkOp, type DocumentStore, type Filter, type Session } from '@app/shared/store';
import { tasksOf } from '../task-store.js';

/*
 * Custom field definitions (docs/custom-fields.md): `POST/GET/PATCH/DELETE /api/v1/custom-fields`.
 * A user's own definitions type its private tasks; a group's type that group's tasks, are read by
 * its members and edited by its owner and admins. Keys are unique per owner (a unique index on
 * `{scope, key}`); the key never changes, the name is what people read.
 */

/** The API view of a definition for caller `p`. */
function toField(doc: CustomFieldDoc, canEdit: boolean): CustomField {
  const f: CustomField = {
    id: doc._id, key: doc.key, name: doc.name, type: doc.type, required: doc.required, can_edit: canEdit,
    version: versionOf(doc), created_at: doc.created_at, updated_at: doc.updated_at,
  };
  if (doc.options) f.options = doc.options;
  if (doc.default !== undefined) f.default = doc.default;
  if (doc.description !== undefined) f.description = doc.description;
  if (doc.group_id !== undefined) f.group_id = doc.group_id;
  if (doc.owner_id !== undefined) f.owner_id = doc.owner_id;
  return f;
}

function notFound(fieldId: string): AppError {
  return new AppError('CUSTOM_FIELD_NOT_FOUND', { details: { fieldId } });
}

/** The groups `userId` administers (owner or admin), by id. */
async function adminGroups(store: DocumentStore, userId: string, groupIds: readonly string[], session?: Session): Promise<Set<string>> {
  if (groupIds.length === 0) return new Set();
  const groups = await store.collection<GroupDoc>(Collections.groups).find({ _id: { $in: [...groupIds] } }, { projection: { _id: 1, owner_id: 1, members: 1 }, ...(session ? { session } : {}) });
  return new Set(groups.filter((g) => g.owner_id === userId || g.members?.some((m) => m.user_id === userId && (m.role === 'owner' || m.role === 'admin'))).map((g) => g._id));
}

/** True when `p` may read a definition: its own, or one of a group it belongs to. */
function readable(p: Principal, doc: CustomFieldDoc): boolean {
  return doc.scope === userScope(p.userId) || (doc.group_id !== undefined && p.groupIds.includes(doc.group_id));
}

/**
 * The definition `fieldId` for a change by `p`: 404 `CUSTOM_FIELD_NOT_FOUND` when it cannot read
 * it, 403 `FORBIDDEN` for a group member who is no owner or admin of its group, 412 on a stale
 * If-Match.
 */
async function editable(store: DocumentStore, p: Principal, fieldId: string, ifMatch: string | undefined, session: Session): Promise<CustomFieldDoc> {
  const doc = await customFieldsOf(store).findOne({ _id: fieldId }, { session });
  if (!doc || !readable(p, doc)) throw notFound(fieldId);
  if (doc.group_id !== undefined && !(await adminGroups(store, p.userId, [doc.group_id], session)).has(doc.group_id)) {
    throw new AppError('FORBIDDEN', { message: "Only the group's owner and admins may change its custom fields", details: { fieldId, group_id: doc.group_id } });
  }
  checkIfMatch(ifMatch, versionOf(doc), { fieldId });
  return doc;
}

/**
 * The definition rules beyond the body schema: options exactly for select kinds, their ids
 * distinct; a default that fits the type. 400 `VALIDATION_FAILED` naming the field.
 */
function checkDefinition(def: { type: CustomFieldType; options?: CustomFieldOption[] | undefined; default?: unknown }): void {
  if (hasOptions(def.type)) {
    if (!def.options?.length) throw invalidField('/options', `a ${def.type} field needs its options`, 'required');
    const seen = new Set<string>();
    def.options.forEach((o, i) => {
      if (seen.has(o.id)) throw invalidField(`/options/${i}/id`, `the option id "${o.id}" is repeated`, 'unique');
      seen.add(o.id);
    });
  } else if (def.options !== undefined) throw invalidField('/options', `a ${def.type} field has no options (only select and multi_select do)`, 'not-allowed');
  if (def.default !== undefined) {
    const r = checkFieldValue(def, def.default);
    if (!r.ok) throw invalidField('/default', `${JSON.stringify(def.default)} does not fit: ${r.reason}`, def.type);
  }
}

/** The tasks a scope's definitions type: a group's tasks, or a user's private ones (soft-deleted included: they can be restored). */
function scopeTasks(doc: Pick<CustomFieldDoc, 'group_id' | 'owner_id'>): Filter {
  return doc.group_id !== undefined ? { groupId: doc.group_id } : { created_by: doc.owner_id, groupId: { $exists: false } };
}

/**
 * `POST /api/v1/custom-fields`: defines `key` for the caller's own tasks, or with `group_id` for a
 * group's (the caller must be its owner or an admin: 404 `GROUP_NOT_FOUND` for a group it is not
 * in, 403 `FORBIDDEN` for a plain member). 409 `CUSTOM_FIELD_KEY_TAKEN` when the owner already
 * defines the key; 400 for options or a default that do not fit the type, or past
 * {@link CUSTOM_FIELDS_PER_OWNER_MAX} definitions. Values already stored under the key are not
 * rewritten: they are checked on their task's next write (docs/custom-fields.md). Once stored,
 * the key's index is ensured ({@link customFieldIndex}: the embedded store builds it, one pass
 * over the tasks; MongoDB's wildcard index already serves it).
 */
const create =
  (deps: ServiceDeps): Handler<typeof CustomFieldsOps.create> =>
  async (input, ctx) => {
    checkDefinition(input);
    const created = await runWrite(deps, ctx, async (w) => {
      const p = await loadPrincipal(deps.store, w.userId, w.session);
      let scope = userScope(w.userId);
      if (input.group_id !== undefined) {
        if (!p.groupIds.includes(input.group_id)) throw new AppError('GROUP_NOT_FOUND', { details: { group_id: input.group_id } });
        if (!(await adminGroups(deps.store, w.userId, [input.group_id], w.session)).has(input.group_id)) {
          throw new AppError('FORBIDDEN', { message: "Only the group's owner and admins may define its custom fields", details: { group_id: input.group_id } });
        }
        scope = groupScope(input.group_id);
      }
      const fields = customFieldsOf(deps.store);
      const taken = await fields.findOne({ scope, key: input.key }, { session: w.session });
      if (taken) throw new AppError('CUSTOM_FIELD_KEY_TAKEN', { message: `${input.key} is already defined ("${taken.name}")`, details: { key: input.key, fieldId: taken._id } });
      if ((await fields.countDocuments({ scope }, { session: w.session })) >= CUSTOM_FIELDS_PER_OWNER_MAX) {
        throw invalidField('/key', `an owner has at most ${CUSTOM_FIELDS_PER_OWNER_MAX} custom fields`, 'maxItems');
      }
      const iso = w.now.toISOString();
      const doc: CustomFieldDoc = {
        _id: randomUUID(), key: input.key, name: input.name, type: input.type, required: input.required ?? false, scope,
        created_by: w.userId, version: 1, created_at: iso, updated_at: iso,
        ...(input.group_id !== undefined ? { group_id: input.group_id } : { owner_id: w.userId }),
        ...(input.options ? { options: input.options } : {}),
        ...(input.default !== undefined ? { default: input.default } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
      };
      await fields.insertOne(doc, { session: w.session });
      return toField(doc, true);
    });
    await deps.store.ensureIndexes([customFieldIndex(input.key)]);
    return created;
  };

/**
 * `GET /api/v1/custom-fields`: the definitions in reach, the caller's own first, then its groups'
 * (oldest first); with `board_id` those of the board's scope (404 `BOARD_NOT_FOUND` when unreadable),
 * with `group_id` one group's (404 `GROUP_NOT_FOUND` unless a member). `can_edit` says which the
 * caller may change.
 */
const list =
  ({ store }: ServiceDeps): Handler<typeof CustomFieldsOps.list> =>
  async (input, ctx) => {
    const userId = callerId(ctx);
    const p = await loadPrincipal(store, userId);
    let scopes: string[];
    if (input.board_id !== undefined) scopes = [boardScope((await loadBoard(store, userId, input.board_id, 'read')).board)];
    else if (input.group_id !== undefined) {
      if (!p.groupIds.includes(input.group_id)) throw new AppError('GROUP_NOT_FOUND', { details: { group_id: input.group_id } });
      scopes = [groupScope(input.group_id)];
    } else scopes = [userScope(userId), ...p.groupIds.map(groupScope)];
    const docs = await definitionsOf(store, scopes);
    const admin = await adminGroups(store, userId, [...new Set(docs.flatMap((d) => (d.group_id !== undefined ? [d.group_id] : [])))]);
    return { data: docs.map((d) => toField(d, d.group_id === undefined ? d.owner_id === userId : admin.has(d.group_id))) };
  };

/** `GET /api/v1/custom-fields/{id}`: one definition the caller can read (404 otherwise). */
const get =
  ({ store }: ServiceDeps): Handler<typeof CustomFieldsOps.get> =>
  async (input, ctx) => {
    const userId = callerId(ctx);
    const p = await loadPrincipal(store, userId);
    const doc = await customFieldsOf(store).findOne({ _id: input.fieldId });
    if (!doc || !readable(p, doc)) throw notFound(input.fieldId);
    const canEdit = doc.group_id === undefined || (await adminGroups(store, userId, [doc.group_id])).has(doc.group_id);
    return toField(doc, canEdit);
  };

/**
 * The stored values of `before.key` checked against the changed definition `after`
 * (docs/custom-fields.md "Changing a type"): each value that no longer fits is converted when
 * `convertFieldValue` can; if any cannot, 409 `CUSTOM_FIELD_TYPE_CONFLICT` counting them (with up
 * to 5 task ids), nothing written. Otherwise the converted tasks are written in this unit (version
 * +1, `task.updated` each) and counted.
 */
async function convertValues(store: DocumentStore, w: WriteUnit, before: CustomFieldDoc, after: CustomFieldDoc): Promise<number> {
  const path = metadataPath(before.key);
  const stored = escapeKey(before.key);
  const tasks = await tasksOf(store).find({ $and: [scopeTasks(before), { [path]: { $exists: true } }] }, { session: w.session });
  const bad: string[] = [];
  const changes: Array<{ task: TaskDoc; value: unknown }> = [];
  for (const task of tasks) {
    const value = task.metadata[stored];
    const next = convertFieldValue(value, after, before);
    if (next === undefined) bad.push(task._id);
    else if (JSON.stringify(next) !== JSON.stringify(value)) changes.push({ task, value: next });
  }
  if (bad.length > 0) {
    throw new AppError('CUSTOM_FIELD_TYPE_CONFLICT', {
      message: `${bad.length} task${bad.length === 1 ? ' holds a value' : 's hold values'} of ${before.key} that a ${after.type} field${hasOptions(after.type) ? ' with these options' : ''} cannot hold; change or remove ${bad.length === 1 ? 'it' : 'them'} first (query: ${before.key} IS NOT NULL)`,
      details: { key: before.key, type: after.type, incompatible: bad.length, examples: bad.slice(0, 5) },
    });
  }
  if (changes.length === 0) return 0;
  const iso = w.now.toISOString();
  const ops: BulkOp<TaskDoc>[] = changes.map(({ task, value }) => ({
    updateOne: { filter: { _id: task._id, ...versionGuard(task) }, update: { $set: { [path]: value, updated_at: iso, updated_by: w.userId, ...nextVersion(task) } } },
  }));
  const result = await tasksOf(store).bulkWrite(ops, { session: w.session });
  if (result.matchedCount !== ops.length) throw new AppError('CONFLICT', { message: 'Tasks changed during the conversion; retry', details: { key: before.key } });
  for (const { task, value } of changes) {
    const event = taskUpdatedEvent(task, { ...task, metadata: { ...task.metadata, [stored]: value }, updated_at: iso, updated_by: w.userId, ...nextVersion(task) });
    if (event && !task.deleted) w.emit(event);
  }
  return changes.length;
}

/**
 * `PATCH /api/v1/custom-fields/{id}` (the owner, or the group's owner and admins; `If-Match`): the
 * fields the body carries change; the key and the owner never do. A new type or new options are
 * checked against the stored values first ({@link convertValues}: converted where possible, else
 * 409 counting them). Reordering, relabelling or recoloring options rewrites no task.
 */
const update =
  (deps: ServiceDeps): Handler<typeof CustomFieldsOps.update> =>
  async (input, ctx) =>
    runWrite(deps, ctx, async (w) => {
      const p = await loadPrincipal(deps.store, w.userId, w.session);
      const doc = await editable(deps.store, p, input.fieldId, ctx.ifMatch, w.session);
      const next: CustomFieldDoc = { ...doc, updated_at: w.now.toISOString(), ...nextVersion(doc) };
      if (input.name !== undefined) next.name = input.name;
      if (input.type !== undefined) next.type = input.type;
      if (input.options !== undefined) next.options = input.options;
      if (!hasOptions(next.type)) delete next.options;
      if (input.required !== undefined) next.required = input.required;
      if (input.default !== undefined) next.default = input.default;
      if (input.description !== undefined) next.description = input.description;
      // a default that the new type cannot hold is converted like the stored values, else dropped
      if (next.default !== undefined && input.default === undefined && !checkFieldValue(next, next.default).ok) {
        const converted = convertFieldValue(next.default, next, doc);
        if (converted === undefined) delete next.default;
        else next.default = converted;
      }
      checkDefinition(next);
      const removedOption = (doc.options ?? []).some((o) => !(next.options ?? []).some((n) => n.id === o.id));
      const converted = next.type !== doc.type || removedOption ? await convertValues(deps.store, w, doc, next) : 0;
      const { _id, ...fields } = next;
      const unset: Record<string, ''> = {};
      for (const k of ['options', 'default'] as const) if (next[k] === undefined && doc[k] !== undefined) unset[k] = '';
      const written = await customFieldsOf(deps.store).findOneAndUpdate(
        { $and: [{ _id }, versionGuard(doc)] },
        Object.keys(unset).length ? { $set: fields, $unset: unset } : { $set: fields },
        { session: w.session, returnDocument: 'after' },
      );
      if (!written) throw new AppError('CONFLICT', { message: 'The custom field changed during the update; read it again and retry', details: { fieldId: _id } });
      return { ...toField(next, true), ...(next.type !== doc.type || removedOption ? { converted } : {}) };
    });

/**
 * `DELETE /api/v1/custom-fields/{id}` (who may change it; `If-Match`): removes the definition only.
 * Values stored under its key stay on the tasks as untyped metadata (docs/custom-fields.md).
 */
const remove =
  (deps: ServiceDeps): Handler<typeof CustomFieldsOps.remove> =>
  async (input, ctx) =>
    runWrite(deps, ctx, async (w) => {
      const p = await loadPrincipal(deps.store, w.userId, w.session);
      const doc = await editable(deps.store, p, input.fieldId, ctx.ifMatch, w.session);
      const gone = await customFieldsOf(deps.store).deleteOne({ $and: [{ _id: doc._id }, versionGuard(doc)] }, { session: w.session });
      if (gone.deletedCount !== 1) throw new AppError('CONFLICT', { message: 'The custom field changed during the delete; read it again and retry', details: { fieldId: doc._id } });
      return null;
    });

/** Handler factories of {@link CustomFieldsOps}. */
export const customFieldHandlers: HandlerFactories<typeof CustomFieldsOps> = { create, list, get, update, remove };
