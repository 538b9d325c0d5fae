import { useCallback, useEffect, useRef, useState } from 'react';
import { errorText, type Api } from './api/client.js';
import { BoardPage } from './board/BoardPage.js';
import { FlowPage } from './board/FlowPage.js';
import { PlanningPage } from './board/PlanningPage.js';
import { SprintPage } from './board/SprintPage.js';
import { BoardsPage } from './BoardsPage.js';
import { ImportPage } from './ImportPage.js';
import { LoginPage } from './LoginPage.js';
import { keepDrafts, resumePlace } from './drafts.js';
import { OutageBanner } from './OutageBanner.js';
import { TokensPage } from './TokensPage.js';

/**
 * Client-side routes: `/` boards list, `/boards/<id>` a board, `/boards/<id>/plan` its backlog and
 * planning, `/boards/<id>/flow` its flow view, `/boards/<id>/sprints/<sprintId>` a sprint view, `/import` the Import page, `/tokens` the Tokens page, `/login`. The gateway answers
 * index.html for each.
 */
export type Route =
  | { page: 'login' }
  | { page: 'boards' }
  | { page: 'board'; boardId: string }
  | { page: 'plan'; boardId: string }
  | { page: 'flow'; boardId: string }
  | { page: 'sprint'; boardId: string; sprintId: string }
  | { page: 'import' }
  | { page: 'tokens' };

export function parseRoute(pathname: string): Route {
  const m = /^\/boards\/([^/]+)\/?$/.exec(pathname);
  if (m) return { page: 'board', boardId: decodeURIComponent(m[1]!) };
  const plan = /^\/boards\/([^/]+)\/plan\/?$/.exec(pathname);
  if (plan) return { page: 'plan', boardId: decodeURIComponent(plan[1]!) };
  const flow = /^\/boards\/([^/]+)\/flow\/?$/.exec(pathname);
  if (flow) return { page: 'flow', boardId: decodeURIComponent(flow[1]!) };
  const sprint = /^\/boards\/([^/]+)\/sprints\/([^/]+)\/?$/.exec(pathname);
  if (sprint) return { page: 'sprint', boardId: decodeURIComponent(sprint[1]!), sprintId: decodeURIComponent(sprint[2]!) };
  if (pathname === '/login') return { page: 'login' };
  if (pathname === '/import') return { page: 'import' };
  if (pathname === '/tokens') return { page: 'tokens' };
  return { page: 'boards' };
}

/** The application shell: header, session handling (a failed refresh returns to login) and routing. */
export function App({ api }: { api: Api }) {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.pathname));
  const [user, setUser] = useState(api.session?.userName ?? null);
  const [sessionNotice, setSessionNotice] = useState<string | null>(null);
  const lastUserId = useRef(api.session?.userId);
  if (api.session) lastUserId.current = api.session.userId;

  const navigate = useCallback((path: string) => {
    history.pushState(null, '', path);
    setRoute(parseRoute(path));
    window.scrollTo(0, 0);
  }, []);

  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.pathname));
    window.addEventListener('popstate', onPop);
    api.onSessionEnd = (reason) => {
      // the server ended the session: keep what was being typed and where, and say why (docs/web.md "Sessions")
      if (reason === 'expired') {
        const userId = lastUserId.current;
        const kept = userId ? keepDrafts(location.pathname, userId) : undefined;
        setSessionNotice(
          Object.keys(kept?.drafts ?? {}).length
            ? 'Your session ended — sign in again. What you were typing is kept and comes back after you sign in.'
            : 'Your session ended — sign in again.',
        );
      } else setSessionNotice(null);
      setUser(null);
      history.pushState(null, '', '/login');
      setRoute({ page: 'login' });
    };
    // a session that ended before this handler was set (a refused refresh at start-up)
    if (!api.session) setUser(null);
    return () => window.removeEventListener('popstate', onPop);
  }, [api]);

  // back from the identity provider: the one-time code in the fragment becomes a session (docs/auth.md)
  const [signInError, setSignInError] = useState<string | null>(null);
  useEffect(() => {
    const code = /^#oidc_code=([A-Za-z0-9_-]+)$/.exec(location.hash)?.[1];
    if (code === undefined) return;
    history.replaceState(null, '', location.pathname);
    api.exchangeOidcCode(code).then(
      (s) => setUser(s.userName),
      (err: unknown) => setSignInError(errorText(err)),
    );
  }, [api]);

  const loggedIn = user !== null && api.session !== null;
  const shown: Route = loggedIn ? (route.page === 'login' ? { page: 'boards' } : route) : { page: 'login' };

  return (
    <>
      <header className="topbar">
        <a
          href="/"
          className="brand"
          onClick={(e) => {
            e.preventDefault();
            navigate('/');
          }}
        >
          Boards
        </a>
        {loggedIn && (
          <a href="/import" className="topnav" onClick={(e) => { e.preventDefault(); navigate('/import'); }}>Import</a>
        )}
        {loggedIn && (
          <div className="who">
            <a
              href="/tokens"
              onClick={(e) => {
                e.preventDefault();
                navigate('/tokens');
              }}
            >
              Access tokens
            </a>
            <span aria-label="Logged in as">{user}</span>
            <button type="button" onClick={() => api.logout()}>
              Log out
            </button>
          </div>
        )}
      </header>
      <OutageBanner api={api} />
      <main id="main">
        {shown.page === 'login' && (
          <LoginPage
            api={api}
            initialError={signInError}
            notice={sessionNotice}
            onLoggedIn={(name) => {
              setUser(name);
              setSessionNotice(null);
              const back = api.session ? resumePlace(api.session.userId) : undefined;
              if (back && back !== '/login') navigate(back);
              else if (route.page === 'login') navigate('/');
            }}
          />
        )}
        {shown.page === 'boards' && <BoardsPage api={api} navigate={navigate} />}
        {shown.page === 'import' && <ImportPage api={api} navigate={navigate} />}
        {shown.page === 'tokens' && <TokensPage api={api} />}
        {shown.page === 'board' && <BoardPage key={shown.boardId} api={api} boardId={shown.boardId} navigate={navigate} />}
        {shown.page === 'plan' && <PlanningPage key={shown.boardId} api={api} boardId={shown.boardId} navigate={navigate} />}
        {shown.page === 'flow' && <FlowPage key={shown.boardId} api={api} boardId={shown.boardId} navigate={navigate} />}
        {shown.page === 'sprint' && (
          <SprintPage key={shown.sprintId} api={api} boardId={shown.boardId} sprintId={shown.sprintId} navigate={navigate} />
        )}
      </main>
    </>
  );
}
