import type { Berth } from '@berth/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useMemo, useState } from 'react';
import { berthFor, exchangeLoginCode, loadSession, problemText, saveSession, type Session } from './api.js';
import { useHash } from './hash.js';
import { AccountPage } from './pages/account.js';
import { AccountsPage } from './pages/accounts.js';
import { DomainPage } from './pages/domain.js';
import { EventsPage } from './pages/events.js';
import { ServersPage } from './pages/servers.js';
import { SignIn } from './pages/sign-in.js';
import { SitePage } from './pages/site.js';

export const BerthContext = createContext<{ berth: Berth; session: Session } | null>(null);
export function useBerth() {
  const value = useContext(BerthContext);
  if (!value) throw new Error('signed out');
  return value;
}

export function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [problem, setProblem] = useState<string | null>(null);
  const queries = useQueryClient();
  const route = useHash().replace(/^#\/?/, '').split('/').filter(Boolean);

  // A login link opens `/panel/#login_code=...`: the code is exchanged once, then leaves the address bar.
  useEffect(() => {
    const code = /^#login_code=([\w-]+)/.exec(location.hash)?.[1];
    if (!code) return;
    history.replaceState(null, '', location.pathname);
    exchangeLoginCode(code)
      .then(async ({ token, account_id }) => {
        const account = await berthFor(token).GET('/v1/accounts/{account_id}', { params: { path: { account_id } } });
        start({ token, accountId: account_id, accountName: account.data?.username ?? account_id });
        location.hash = `#/accounts/${account_id}`;
      })
      .catch((err: unknown) => setProblem(problemText(err)));
  }, []);

  function start(s: Session | null) {
    saveSession(s);
    queries.clear();
    setSession(s);
  }
  const berth = useMemo(() => (session ? berthFor(session.token) : null), [session]);
  // Whose token it is: operators and resellers also see the fleet.
  const me = useQuery({
    queryKey: ['me', session?.token],
    queryFn: async () => (await berth!.GET('/v1/me')).data,
    enabled: berth !== null,
  });
  const fleet = me.data !== undefined && me.data.principal.kind !== 'account';

  if (!session || !berth) return <SignIn onSignIn={(token) => start({ token })} problem={problem} />;
  const [page, id] = route;
  return (
    <BerthContext.Provider value={{ berth, session }}>
      {session.accountId && (
        <div className="banner" role="status">
          You are managing the account <strong>{session.accountName}</strong> through a login link.
        </div>
      )}
      <header>
        <a href="#/" className="brand">
          Berth
        </a>
        <nav aria-label="Main">
          <a href="#/">Accounts</a>
          <a href="#/events">Events</a>
          {fleet && <a href="#/servers">Servers</a>}
        </nav>
        <button type="button" onClick={() => start(null)}>
          Sign out
        </button>
      </header>
      <main>
        {page === 'accounts' && id ? (
          <AccountPage id={id} />
        ) : page === 'domains' && id ? (
          <DomainPage name={id} />
        ) : page === 'sites' && id ? (
          <SitePage id={id} />
        ) : page === 'servers' ? (
          <ServersPage />
        ) : page === 'events' ? (
          <EventsPage />
        ) : (
          <AccountsPage />
        )}
      </main>
    </BerthContext.Provider>
  );
}
