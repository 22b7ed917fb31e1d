import type { Config } from '../../config.js';
import { LOCAL_SERVER_ID, type ServerRow } from './repo.js';

/** A server's addresses, as zones publish them. */
export interface ServerAddresses {
  ipv4: string | null;
  ipv6: string | null;
}

/** As the API shows them and zones publish them: the local server's are the configured web addresses until set through the API. */
export function addressesOf(
  row: Pick<ServerRow, 'id' | 'ipv4' | 'ipv6'>,
  config: Pick<Config, 'webIpv4' | 'webIpv6'>,
): ServerAddresses {
  const local = row.id === LOCAL_SERVER_ID;
  return { ipv4: row.ipv4 ?? (local ? config.webIpv4 : null), ipv6: row.ipv6 ?? (local ? config.webIpv6 : null) };
}
