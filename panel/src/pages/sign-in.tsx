import { useState } from 'react';
import { Problem } from '../ui.js';

/** Sign in with an API token (kept in this tab's session storage), or follow a login link. */
export function SignIn(p: { onSignIn: (token: string) => void; problem: string | null }) {
  const [token, setToken] = useState('');
  return (
    <main className="sign-in">
      <h1>Berth</h1>
      <form
        aria-label="Sign in"
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) p.onSignIn(token.trim());
        }}
      >
        <label htmlFor="token">API token</label>
        <input id="token" type="password" value={token} onChange={(e) => setToken(e.target.value)} autoComplete="off" />
        <button type="submit">Sign in</button>
      </form>
      <Problem error={p.problem} />
    </main>
  );
}
