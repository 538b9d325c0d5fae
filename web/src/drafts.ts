import { useEffect, useRef } from 'react';

/**
 * Drafts that outlive an ended session (docs/web.md "Sessions"). Every open text field a user
 * writes in (a card's title and description while editing, a note, a new card's title) registers
 * its current value here under a key (`card:<taskId>:title`, `card:<taskId>:description`,
 * `card:<taskId>:note`, `new-card:<columnId>`). When the session really ends (the server refused
 * the refresh), {@link keepDrafts} writes the non-empty ones and where the user was (path and
 * open card) to local storage; after signing in again the page returns there and each field takes
 * its draft back once ({@link takeDraft}). A logout keeps nothing.
 */

/** Local storage key of the kept drafts: `{ path, card?, drafts: { key: text } }`. */
export const DRAFTS_KEY = 'board.drafts';

/** What is kept when a session ends. */
export interface KeptWork {
  /** Whose work it is: another user signing in does not get it. */
  userId: string;
  /** The page's path (`/boards/<id>`). */
  path: string;
  /** The card whose detail was open, if any. */
  card?: string;
  drafts: Record<string, string>;
}

const open = new Map<string, () => string>();
let openCard: string | undefined;

const storage = (): Storage | undefined => (globalThis as { localStorage?: Storage }).localStorage;

/** Registers a field's current text under `key` while the component is mounted (`key` null: nothing). */
export function useDraft(key: string | null, value: string): void {
  const current = useRef(value);
  current.current = value;
  useEffect(() => {
    if (key === null) return;
    const get = () => current.current;
    open.set(key, get);
    return () => {
      if (open.get(key) === get) open.delete(key);
    };
  }, [key]);
}

/** The card whose detail is open (kept with the drafts, so it opens again after signing in). */
export function useOpenCard(taskId: string | null): void {
  useEffect(() => {
    openCard = taskId ?? undefined;
    return () => {
      if (openCard === taskId) openCard = undefined;
    };
  }, [taskId]);
}

/** Writes the open drafts and the current place to local storage (the session ended); returns what was kept. */
export function keepDrafts(path: string, userId: string): KeptWork {
  const drafts: Record<string, string> = {};
  for (const [k, get] of open) {
    const v = get();
    if (v.trim() !== '') drafts[k] = v;
  }
  const kept: KeptWork = { userId, path, ...(openCard ? { card: openCard } : {}), drafts };
  try {
    storage()?.setItem(DRAFTS_KEY, JSON.stringify(kept));
  } catch {
    /* storage full or refused: the drafts are lost as before */
  }
  return kept;
}

function read(): KeptWork | undefined {
  try {
    const raw = storage()?.getItem(DRAFTS_KEY);
    return raw ? (JSON.parse(raw) as KeptWork) : undefined;
  } catch {
    return undefined;
  }
}

let pendingCard: string | undefined;

/**
 * After signing in as `userId`: the path to return to (undefined when nothing was kept, or it was
 * another user's, which is then dropped). The place is forgotten as it is taken; the open card is
 * handed to the board page ({@link takeReturnCard}); the drafts stay until their fields take them.
 */
export function resumePlace(userId: string): string | undefined {
  const kept = read();
  if (!kept) return undefined;
  if (kept.userId !== userId) {
    storage()?.removeItem(DRAFTS_KEY);
    return undefined;
  }
  pendingCard = kept.card;
  const { path } = kept;
  if (Object.keys(kept.drafts).length === 0) storage()?.removeItem(DRAFTS_KEY);
  else storage()?.setItem(DRAFTS_KEY, JSON.stringify({ userId, path: '', drafts: kept.drafts }));
  return path || undefined;
}

/** The card to open again on the board page at `path` after signing in, taken once. */
export function takeReturnCard(): string | undefined {
  const c = pendingCard;
  pendingCard = undefined;
  return c;
}

/** The kept draft of `key`, removed as it is taken (the field shows it once). */
export function takeDraft(key: string): string | undefined {
  const kept = read();
  const v = kept?.drafts[key];
  if (kept && v !== undefined) {
    delete kept.drafts[key];
    if (Object.keys(kept.drafts).length === 0) storage()?.removeItem(DRAFTS_KEY);
    else storage()?.setItem(DRAFTS_KEY, JSON.stringify(kept));
  }
  return v;
}

/** True when a draft is kept for `key` (without taking it). */
export function hasDraft(key: string): boolean {
  return read()?.drafts[key] !== undefined;
}
