import {
  KeyboardSensor, PointerSensor, pointerWithin, rectIntersection, useDraggable, useSensor, useSensors,
  type CollisionDetection, type KeyboardCoordinateGetter, type SensorDescriptor, type SensorOptions,
} from '@dnd-kit/core';
import { useCallback, useRef, type MutableRefObject, type PointerEvent, type ReactNode } from 'react';
import { neighbourColumn } from './state.js';

/** What {@link useLaneDrag} gives a page's `DndContext`. */
export interface LaneDrag {
  sensors: SensorDescriptor<SensorOptions>[];
  collision: CollisionDetection;
  /** The lane a keyboard drag is aimed at (set by the arrow keys); pages clear it when a drag starts or ends. */
  keyboardTarget: MutableRefObject<string | null>;
}

/**
 * Drag and drop between lanes with the mouse (after 6 px) and the keyboard: the arrow keys jump
 * the held card to the neighbouring lane of `order` (lane ids, left to right), aiming `offsetY` px
 * below the lane's top. Collision: the lane under the pointer, else the most overlapped one. Used
 * by the board (its columns) and the planning view (backlog and sprints).
 */
export function useLaneDrag(order: readonly string[], offsetY: number): LaneDrag {
  const lanes = useRef(order);
  lanes.current = order;
  const keyboardTarget = useRef<string | null>(null);
  const keyboardCoordinates: KeyboardCoordinateGetter = useCallback((event, { context }) => {
    const { active, droppableRects } = context;
    if (!active) return undefined;
    const current = keyboardTarget.current ?? (active.data.current?.from as string);
    const step = event.code === 'ArrowRight' || event.code === 'ArrowDown' ? 1 : event.code === 'ArrowLeft' || event.code === 'ArrowUp' ? -1 : 0;
    if (step === 0) return undefined;
    event.preventDefault();
    const target = neighbourColumn(lanes.current, current, step);
    const rect = target ? droppableRects.get(target) : undefined;
    if (!target || !rect) return undefined;
    keyboardTarget.current = target;
    return { x: rect.left + 8, y: rect.top + offsetY };
  }, [offsetY]);
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 6 } }),
    useSensor(KeyboardSensor, { coordinateGetter: keyboardCoordinates }),
  );
  const collision: CollisionDetection = useCallback((args) => {
    const hits = pointerWithin(args);
    return hits.length ? hits : rectIntersection(args);
  }, []);
  return { sensors, collision, keyboardTarget };
}

/** What {@link useCardDrag} gives a card. */
export interface CardDrag {
  /** The ref of the card's element (the `li`), which dnd-kit measures. */
  ref: (element: HTMLElement | null) => void;
  /** The card is being dragged (a copy follows the pointer; the card itself stays as a placeholder). */
  isDragging: boolean;
  /** The card's drag handle: the button "Drag “title”" that starts a pointer or keyboard drag; none when read-only. */
  handle: ReactNode;
  /**
   * The pointer listener that lets the whole card start a mouse drag (after 6 px, so a click on
   * its title or buttons stays a click); undefined when read-only. The keyboard drag stays on the handle.
   */
  onPointerDown: ((e: PointerEvent<HTMLElement>) => void) | undefined;
}

/**
 * Makes a card draggable between the lanes of {@link useLaneDrag}: `from` is the lane it stands in
 * (where the arrow keys start from), and a read-only viewer (`writable` false) gets no handle and no
 * drag. The handle is the only part that starts a drag, so the card's title and buttons keep their
 * clicks. Used by the board's cards and the planning view's.
 */
export function useCardDrag(card: { id: string; title: string }, from: string, writable: boolean): CardDrag {
  const { setNodeRef, setActivatorNodeRef, listeners, attributes, isDragging } = useDraggable({
    id: card.id,
    data: { from },
    disabled: !writable,
  });
  const handle = writable ? (
    <button
      type="button"
      ref={setActivatorNodeRef}
      className="handle"
      {...attributes}
      {...listeners}
      aria-label={`Drag “${card.title}”`}
      aria-roledescription="draggable card"
    >
      ⠿
    </button>
  ) : undefined;
  const onPointerDown = writable ? (listeners?.onPointerDown as ((e: PointerEvent<HTMLElement>) => void) | undefined) : undefined;
  return { ref: setNodeRef, isDragging, handle, onPointerDown };
}
