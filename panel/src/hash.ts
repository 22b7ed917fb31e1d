import { useEffect, useState } from 'react';

/**
 * The page's fragment, followed as it changes. Routes live there (`#/accounts/acc_...`,
 * `#/operations/createAccount`): the server serves one page, and no server log sees the path.
 */
export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}
