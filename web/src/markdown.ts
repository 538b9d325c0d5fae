import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Card markdown (GitHub-flavoured, line breaks kept). Raw HTML in a card is shown as text, never
 * parsed as HTML: the page then never even parses a card's `<img onerror=…>` (Chromium reports
 * parsing an inline handler under the page's CSP as a console error, docs/web.md).
 */
const cardMarkdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(token.text);
    },
    // A task list item's box ("- [x] done") as a mark, not a form control (inputs are removed below).
    checkbox({ checked }: Tokens.Checkbox) {
      return checked
        ? '<span class="task-box" role="img" aria-label="done">☑</span> '
        : '<span class="task-box" role="img" aria-label="not done">☐</span> ';
    },
  },
});

/**
 * Renders a card's markdown (description, notes) to HTML that is safe to insert: marked
 * renders it with raw HTML escaped, then DOMPurify removes anything active that markdown itself can
 * produce (`javascript:` links and images, unknown protocols). Links open in a new tab without an
 * opener. The page's Content-Security-Policy (`script-src 'self'`) is the third fence.
 */
export function renderMarkdown(text: string): string {
  const html = cardMarkdown.parse(text, { async: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button'] });
}

// Every link in rendered markdown opens safely in a new tab.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
