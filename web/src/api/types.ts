/**
 * The API's shapes for the web board, taken from the same TypeBox schemas that generate the
 * gateway's Swagger document (`@app/shared/contracts`): type-only imports, nothing of them is
 * bundled, and no shape is copied by hand.
 */
import type { Static } from '@sinclair/typebox';
import type {
  Board as BoardSchema,
  BoardList as BoardListSchema,
  BoardSummaryResult,
  BoardMember as BoardMemberSchema,
  CardMoveResult as CardMoveResultType,
  CloseSprintResult as CloseSprintResultType,
  ColumnCard as ColumnCardType,
  ColumnInput as ColumnInputSchema,
  ColumnQueryResult,
  Group as GroupType,
  Note as NoteType,
  PreviewActionsResult,
  TaskDetail as TaskDetailType,
  TasksQueryResult,
  Column as ColumnSchema,
  AppliedAction as AppliedActionSchema,
  BoardQueryResult,
  Burndown as BurndownSchema,
  QueryFault as QueryFaultSchema,
  QueryValidateResult,
  View as ViewSchema,
  ViewList as ViewListSchema,
  SprintList as SprintListSchema,
  SprintReport as SprintReportSchema,
  StartSprintResult as StartSprintResultSchema,
  Task as TaskType,
  VelocityResult as VelocityResultSchema,
  FlowResult as FlowResultSchema,
  CycleTimeResult as CycleTimeResultSchema,
  AccessToken as AccessTokenSchema,
  CreatedAccessToken as CreatedAccessTokenSchema,
} from '@app/shared/contracts';

export type Board = Static<typeof BoardSchema>;
export type BoardList = Static<typeof BoardListSchema>;
export type BoardMember = Static<typeof BoardMemberSchema>;
export type BoardColumn = Static<typeof ColumnSchema>;
export type ColumnInput = Static<typeof ColumnInputSchema>;
export type Summary = Static<typeof BoardSummaryResult>;
export type ColumnPage = Static<typeof ColumnQueryResult>;
export type Card = ColumnCardType;
export type MoveResult = CardMoveResultType;
export type AppliedAction = Static<typeof AppliedActionSchema>;
export type CloseSprintResult = CloseSprintResultType;
export type Group = GroupType;
export type Note = NoteType;
export type Preview = Static<typeof PreviewActionsResult>;
export type TaskDetail = TaskDetailType;
export type Task = TaskType;
export type TaskPage = Static<typeof TasksQueryResult>;
export type BoardTaskPage = Static<typeof BoardQueryResult>;
export type SprintSummary = Static<typeof SprintListSchema>[number];
export type SprintReport = Static<typeof SprintReportSchema>;
export type Velocity = Static<typeof VelocityResultSchema>;
export type Burndown = Static<typeof BurndownSchema>;
export type StartSprintResult = Static<typeof StartSprintResultSchema>;
export type QueryFault = Static<typeof QueryFaultSchema>;
export type QueryValidation = Static<typeof QueryValidateResult>;
export type SavedView = Static<typeof ViewSchema>;
export type SavedViewList = Static<typeof ViewListSchema>;
/** Cumulative flow of a board (docs/flow.md "Cumulative flow"). */
export type Flow = Static<typeof FlowResultSchema>;
/** Lead and cycle time of a board's finished cards (docs/flow.md "Lead and cycle time"). */
export type CycleTime = Static<typeof CycleTimeResultSchema>;

/** A personal access token as listed (never its secret), docs/auth.md "Access tokens". */
export type AccessToken = Static<typeof AccessTokenSchema>;
/** A token just created: the listed fields plus its secret, shown only in this answer. */
export type CreatedAccessToken = Static<typeof CreatedAccessTokenSchema>;

/** The token pair of login and refresh (docs/auth.md). */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  userId: string;
  userName: string;
}

/** The error body of every failure (docs/http.md "Error body"). */
export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown> & { position?: number; part?: string; field?: string };
  validationErrors?: Array<{ field: string; code: string; message: string }>;
  traceId?: string;
  task?: { id: string; status: string; tags: string[] };
}

/** A custom field definition (docs/custom-fields.md). */
export type CustomField = import('@app/shared/contracts').CustomField;
/** One option of a select field. */
export type CustomFieldOption = import('@app/shared/contracts').CustomFieldOption;
