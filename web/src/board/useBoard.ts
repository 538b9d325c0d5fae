import { useCallback, useMemo, useState } from 'react';
import type { Api } from '../api/client.js';
import type { Board, BoardMember, Task } from '../api/types.js';

/** A sprint the board offers (switcher, close dialog, sprint header): an open sprint task. */
export interface SprintOption {
  id: string;
  title: string;
}

/** What {@link useBoard} gives the board page. */
export interface BoardMeta {
  board: Board | null;
  setBoard: (b: Board) => void;
  /** Re-reads the board (its columns, `activeSprintId`, permission); throws the API's error. */
  loadBoard: () => Promise<Board>;
  /** The open sprints (tasks with `app.type = 'sprint'`, status not `done`), newest first. */
  sprints: SprintOption[];
  loadSprints: () => Promise<void>;
  /** The board's people (owner and group members) and user id → name. */
  members: BoardMember[];
  people: ReadonlyMap<string, string>;
  loadMembers: () => void;
}

/** The board itself, its open sprints and its people, each re-readable on its own. */
export function useBoard(api: Api, boardId: string): BoardMeta {
  const [board, setBoard] = useState<Board | null>(null);
  const [sprints, setSprints] = useState<SprintOption[]>([]);
  const [members, setMembers] = useState<BoardMember[]>([]);
  const people = useMemo(() => new Map(members.map((m) => [m.id, m.username])), [members]);

  const loadBoard = useCallback(async () => {
    const b = await api.getBoard(boardId);
    setBoard(b);
    return b;
  }, [api, boardId]);

  const loadSprints = useCallback(async () => {
    try {
      const page = await api.queryTasks("app.type = 'sprint' AND status != 'done' ORDER BY created_at DESC");
      setSprints(page.data.map((t: Task) => ({ id: t.id, title: t.title })));
    } catch {
      setSprints([]);
    }
  }, [api]);

  const loadMembers = useCallback(() => {
    api.boardMembers(boardId).then(setMembers, () => {});
  }, [api, boardId]);

  return { board, setBoard, loadBoard, sprints, loadSprints, members, people, loadMembers };
}
