import { useEffect, useState, type FormEvent } from 'react';
import { errorText, type Api } from './api/client.js';

/**
 * Log in, or register then log in (docs/auth.md); "Sign in with …" the identity provider when the
 * server has one (the form is hidden when password sign-in is off). Server messages are shown as
 * they come.
 */
export function LoginPage({ api, onLoggedIn, initialError = null, notice = null }: { api: Api; onLoggedIn: (userName: string) => void; initialError?: string | null; notice?: string | null }) {
  const [methods, setMethods] = useState<{ password: boolean; oidc: { name: string } | null }>({ password: true, oidc: null });
  useEffect(() => {
    let live = true;
    api.signInMethods().then((m) => live && setMethods(m), () => {});
    return () => {
      live = false;
    };
  }, [api]);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(initialError);
  useEffect(() => {
    if (initialError) setError(initialError);
  }, [initialError]);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const mode = ((e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null)?.value ?? 'login';
    setBusy(true);
    setError(null);
    try {
      if (mode === 'register') await api.register(username, password);
      const s = await api.login(username, password);
      onLoggedIn(s.userName);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="login" aria-labelledby="login-title">
      <h1 id="login-title">{methods.password ? 'Log in or register' : 'Sign in'}</h1>
      {notice && (
        <p role="status" className="notice info" data-testid="session-notice">
          {notice}
        </p>
      )}
      {methods.oidc && (
        <p>
          <a className="button" href="/auth/oidc/login">
            Sign in with {methods.oidc.name}
          </a>
        </p>
      )}
      {!methods.password && error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {methods.password && (
      <form onSubmit={submit}>
        <label>
          Username
          <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <div className="row">
          <button type="submit" value="login" disabled={busy}>
            Log in
          </button>
          <button type="submit" value="register" className="secondary" disabled={busy}>
            Register
          </button>
        </div>
      </form>
      )}
    </section>
  );
}
