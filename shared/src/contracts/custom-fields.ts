import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest, StringEnum, Timestamp } from './schemas.js';

/*
 * Custom fields (docs/custom-fields.md): typed definitions of `cf.*` metadata keys, owned by a
 * user (their private tasks) or a group (that group's tasks). Served by the tasks service; every
 * task write checks the values of defined keys, and queries compare them by type.
 */

/** The types a custom field can have. */
export const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'datetime', 'boolean', 'select', 'multi_select', 'user', 'url'] as const;
/** A custom field type. */
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
/** The types whose values are option ids. */
export const SELECT_TYPES: ReadonlySet<CustomFieldType> = new Set(['select', 'multi_select']);
/** Most options one select field may have. */
export const CUSTOM_FIELD_OPTIONS_MAX = 100;
/** Most definitions one owner (a user or a group) may have. */
export const CUSTOM_FIELDS_PER_OWNER_MAX = 200;

/** The key of a custom field: `cf.` and 1..64 letters, digits, `_` or `-` (`cf.priority`). */
export const CustomFieldKey = Type.String({ pattern: '^cf\\.[A-Za-z0-9_-]{1,64}$', description: 'the full metadata key, `cf.` + 1..64 letters, digits, `_` or `-` (e.g. `cf.priority`); stable' });

/** One option of a select field, in the order the definition lists them. */
export const CustomFieldOption = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'stable option id: the value stored on tasks' }),
    label: Type.String({ minLength: 1, maxLength: 100, description: 'what people read' }),
    color: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: 'badge color, `#rrggbb`' })),
  },
  { additionalProperties: false },
);
export type CustomFieldOption = Static<typeof CustomFieldOption>;

const Options = Type.Array(CustomFieldOption, { minItems: 1, maxItems: CUSTOM_FIELD_OPTIONS_MAX, description: 'select and multi_select only: the options in their order (ORDER BY follows it)' });
const Name = Type.String({ minLength: 1, maxLength: 100, description: 'the display name (what people read)' });
const Description = Type.String({ maxLength: 1000 });
const Default = Type.Unknown({ description: 'a value of the field type, set on task create when the key is not sent' });

/** Path parameters of `/api/v1/custom-fields/{fieldId}`. */
export const CustomFieldParams = Type.Object({ fieldId: Type.String({ minLength: 1, maxLength: 64 }) });

/** Body of `POST /api/v1/custom-fields`. */
export const CustomFieldCreateBody = Type.Object(
  {
    key: CustomFieldKey,
    name: Name,
    type: StringEnum([...CUSTOM_FIELD_TYPES], { description: 'text, number, date, datetime, boolean, select, multi_select, user (a user id) or url' }),
    options: Type.Optional(Options),
    required: Type.Optional(Type.Boolean({ description: 'true: a task create must carry the key (or get the default)' })),
    default: Type.Optional(Default),
    description: Type.Optional(Description),
    group_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "the owning group (its tasks; its owner and admins edit); omitted: the caller's own (its private tasks)" })),
  },
  { additionalProperties: false },
);
export type CustomFieldCreateBody = Static<typeof CustomFieldCreateBody>;

/** Body of `PATCH /api/v1/custom-fields/{fieldId}`: the fields it carries change (the key and owner never do). */
export const CustomFieldUpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    type: Type.Optional(StringEnum([...CUSTOM_FIELD_TYPES])),
    options: Type.Optional(Options),
    required: Type.Optional(Type.Boolean()),
    default: Type.Optional(Default),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);
export type CustomFieldUpdateBody = Static<typeof CustomFieldUpdateBody>;

/** A custom field definition as the API returns it. */
export const CustomField = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  type: Type.String(),
  options: Type.Optional(Type.Array(CustomFieldOption)),
  required: Type.Boolean(),
  default: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.String()),
  group_id: Type.Optional(Type.String({ description: 'the owning group; absent: owned by `owner_id` (their private tasks)' })),
  owner_id: Type.Optional(Type.String()),
  can_edit: Type.Boolean({ description: 'true when the caller may change or delete it' }),
  version: Type.Integer({ minimum: 1 }),
  created_at: Timestamp,
  updated_at: Timestamp,
  /** Tasks whose values were converted by a type change (PATCH only). */
  converted: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type CustomField = Static<typeof CustomField>;

/** Query string of `GET /api/v1/custom-fields`. */
export const CustomFieldListQuerystring = Type.Object(
  {
    board_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "only the definitions of this board's scope (its group's, or its owner's for a private board)" })),
    group_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "only this group's definitions" })),
  },
  { additionalProperties: false },
);
export type CustomFieldListQuerystring = Static<typeof CustomFieldListQuerystring>;

/** The definitions in reach: the caller's own, then its groups' (oldest first). */
export const CustomFieldList = Type.Object({ data: Type.Array(CustomField) });

const fieldVersion = (f: CustomField) => f.version;

/** The custom fields' bus API (tasks service), subjects `customFields.<verb>`. */
export const CustomFieldsOps = {
  create: op({ subject: 'customFields.create', request: busRequest({}, CustomFieldCreateBody.properties), response: CustomField, versionOf: fieldVersion }),
  list: op({ subject: 'customFields.list', request: busRequest({}, CustomFieldListQuerystring.properties), response: CustomFieldList }),
  get: op({ subject: 'customFields.get', request: busRequest(CustomFieldParams.properties), response: CustomField, versionOf: fieldVersion }),
  update: op({ subject: 'customFields.update', request: busRequest(CustomFieldParams.properties, CustomFieldUpdateBody.properties), response: CustomField, versionOf: fieldVersion }),
  remove: op({ subject: 'customFields.remove', request: busRequest(CustomFieldParams.properties), response: Type.Null() }),
} as const;
