/** Collection names of the one shared database (DESIGN §1). */
export const Collections = {
  tasks: 'tasks',
  notes: 'notes',
  boards: 'boards',
  groups: 'groups',
  users: 'users',
  refreshTokens: 'refresh_tokens',
  /** Frozen sprint start and close snapshots (issue 12; services/sprints/src/domain/snapshots.ts). */
  sprintSnapshots: 'sprint_snapshots',
} as const;
