import DOMPurify from 'dompurify';
import { marked } from 'marked';

/**
 * Renders a card's markdown (description, notes) to HTML that is safe to insert (issue 13): marked
 * parses it (GitHub-flavoured, raw HTML passed through), then DOMPurify removes every script,
 * event handler, `javascript:` URL and other active content. Links open in a new tab without an
 * opener. The page's Content-Security-Policy (`script-src 'self'`) is the second fence.
 */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: true });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button'] });
}

// Every link in rendered markdown opens safely in a new tab.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
