import { useState, type FormEvent } from 'react';
import { errorText, type Api } from './api/client.js';

/** Log in, or register then log in (docs/auth.md). Server messages are shown as they come. */
export function LoginPage({ api, onLoggedIn }: { api: Api; onLoggedIn: (userName: string) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
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
      <h1 id="login-title">Log in or register</h1>
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
    </section>
  );
}
