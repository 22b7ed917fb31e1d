import { describe, expect, it } from 'vitest';
import { receiveUnits } from '../../src/agent/receive.js';

const database = {
  kind: 'database',
  key: 'acc_1',
  generation: 3,
  spec: {
    prefix: 'shop_',
    databases: [{ name: 'shop_wp', charset: 'utf8mb4', collation: 'utf8mb4_unicode_ci' }],
    users: [],
    grants: [],
  },
};
const web = {
  kind: 'web',
  key: 'sit_1',
  generation: 1,
  spec: {
    site_id: 'sit_1',
    account_id: 'acc_1',
    username: 'shop',
    hostnames: ['shop.example'],
    suspended: false,
    frozen: false,
    php: {
      version: '8.3',
      settings: { memory_limit_mb: 128, upload_max_filesize_mb: 64, max_execution_time_s: 30, display_errors: false },
    },
    tls: null,
    php_versions: ['8.3'],
    php_workers: 5,
    prune: true,
    removed: false,
    release: null,
  },
};

describe('an agent receiving units', () => {
  it('takes the units whose specs it understands', () => {
    expect(receiveUnits([database, web])).toEqual({ units: [database, web], refused: [] });
  });

  it('reports a unit with a spec it cannot read as failed, naming where, and still takes the others', () => {
    const hostile = { ...web, key: 'sit_2', spec: { ...web.spec, username: '../root' } };
    const { units, refused } = receiveUnits([hostile, database]);
    expect(units).toEqual([database]);
    expect(refused).toEqual([{ kind: 'web', key: 'sit_2', generation: 1, error: expect.stringContaining('/spec/username') }]);
  });

  it('refuses a spec missing a field, or of the wrong kind’s shape', () => {
    const { spec, ...noSpec } = database;
    expect(receiveUnits([noSpec]).refused[0]?.error).toMatch(/not one this agent applies/);
    expect(receiveUnits([{ ...web, spec }]).refused).toHaveLength(1);
    expect(receiveUnits([{ ...web, spec: { ...web.spec, php: { version: '8.3;', settings: {} } } }]).units).toEqual([]);
  });

  it('ignores what cannot be named: no kind, key or generation to report against', () => {
    expect(receiveUnits([{ kind: 'shell', key: 'x', generation: 1, spec: {} }, { key: 'x' }, null, 'web'])).toEqual({
      units: [],
      refused: [],
    });
    expect(receiveUnits(undefined)).toEqual({ units: [], refused: [] });
  });
});
