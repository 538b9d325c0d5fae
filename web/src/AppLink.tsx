import type { ReactNode } from 'react';

/**
 * A link to a client-side route (docs/web.md): a real `href` (opens in a new tab, copyable), and a
 * plain click goes through the application's `navigate` without a page load.
 */
export function AppLink(p: { to: string; navigate: (path: string) => void; children: ReactNode }) {
  return (
    <a
      href={p.to}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        p.navigate(p.to);
      }}
    >
      {p.children}
    </a>
  );
}
