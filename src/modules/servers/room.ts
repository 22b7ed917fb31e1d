import { bytesUsedUnder } from '../../lib/disk.js';
import { LOCAL_SERVER_ID, type ServerRow } from './repo.js';

/** Bytes used on a server's disk, as `usage.disk_bytes` shows them: the local one's measured now, another's as its agent last reported. */
export const diskUsedOn = (row: ServerRow, dataDir: string): Promise<number> =>
  row.id === LOCAL_SERVER_ID ? bytesUsedUnder(dataDir) : Promise.resolve(Number(row.disk_bytes_used));

/**
 * Why a server takes no more accounts, or null while it has room: it holds `capacity.accounts`
 * (`held`), or its disk has reached `capacity.disk_bytes`.
 */
export async function noRoomOn(row: ServerRow, held: number, dataDir: string): Promise<string | null> {
  if (held >= row.capacity_accounts) return `holds its capacity of ${row.capacity_accounts} accounts`;
  const disk = row.capacity_disk_bytes === null ? null : Number(row.capacity_disk_bytes);
  if (disk !== null && (await diskUsedOn(row, dataDir)) >= disk) return `has used its disk capacity of ${disk} bytes`;
  return null;
}
