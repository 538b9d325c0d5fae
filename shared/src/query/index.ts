/**
 * The query language (docs/architecture.md §6–7): parse text to an AST, print it canonically, compile it to a
 * store filter + sort, derive column actions, and assemble a column's effective query.
 * Reference: docs/query-language.md.
 */
export type { BuiltinField, CmpOp, Expr, Field, FunctionName, OrderKey, Pred, Query, Value } from './ast.js';
export { BUILTIN_FIELDS, FUNCTION_NAMES } from './ast.js';
export { checkFunctionContext, hasCalls, NO_SPRINT, periodBoundary, resolveQuery, type FunctionLookups, type QueryContext } from './resolve.js';
export { parseQuery, parseFilter, MAX_QUERY_LENGTH, MAX_DEPTH, MAX_SHIFT } from './parse.js';
export { likeToRegex, MAX_PATTERN_LENGTH, MAX_WILDCARD_RUNS } from './patterns.js';
export { printQuery } from './print.js';
export { compileQuery, queryMatches, fieldPath, type CompiledQuery } from './compile.js';
export { checkQueryTypes, compileTypedPred, namesCustomFields, optionSort, TYPE_OPERATORS, type FieldTypes, type TypedField } from './typed.js';
export { isMoverValue, materializeActions, MOVER_VALUE } from './materialize.js';
export { andQueries, buildEffectiveQuery, storedQueryError, TYPE_FIELD } from './compose.js';
export { validateQuery, type QueryFault, type QueryValidation } from './validate.js';
export { checkSortDepth, MAX_LIST_VALUES, MAX_NESTING, MAX_TEXT_SORT_OFFSET, UNINDEXED_TEXT_FIELDS, type CostRule } from './cost.js';
