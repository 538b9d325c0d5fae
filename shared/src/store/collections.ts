/** Collection names of the one shared database (DESIGN §1). */
export const Collections = {
  tasks: 'tasks',
  notes: 'notes',
  boards: 'boards',
  groups: 'groups',
  users: 'users',
  refreshTokens: 'refresh_tokens',
} as const;
