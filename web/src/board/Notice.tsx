/** A message of a page's message bar: an error (announced at once) or a confirmation. */
export interface NoticeMessage {
  text: string;
  kind: 'error' | 'info';
}

/**
 * The message bar of the board and the planning view: the last error (`role="alert"`) or
 * confirmation (`role="status"`) with a button that dismisses it. Renders nothing without a notice.
 */
export function Notice({ notice, onDismiss }: { notice: NoticeMessage | null; onDismiss: () => void }) {
  if (!notice) return null;
  return (
    <div className={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'}>
      <span>{notice.text}</span>
      <button type="button" className="icon" aria-label="Dismiss message" onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}

/** A view that could not be read at all: only the error (`role="alert"`), in the view's own section. */
export function PageError({ className, text }: { className: string; text: string }) {
  return (
    <section className={className}>
      <p role="alert" className="error">
        {text}
      </p>
    </section>
  );
}
