import { describe, expect, it } from 'vitest';
import { addressPolicy, ForbiddenTarget } from '../../src/modules/webhooks/address-policy.js';
import { MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from '../../src/modules/webhooks/schedule.js';

const resolvingTo = (address: string) => async (): Promise<{ address: string; family: number }[]> => [
  { address, family: address.includes(':') ? 6 : 4 },
];

describe('webhook address policy', () => {
  const strict = addressPolicy([]);

  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '[::1]',
    '[::]',
    '[fe80::1]',
    '[fd00:ec2::254]',
    '[ff02::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:a9fe:a9fe]',
    '[64:ff9b::a00:1]',
    '[2002:7f00:1::]',
  ])('refuses https://%s/', (host) => {
    expect(strict.urlProblems(`https://${host}/hook`)).toHaveLength(1);
  });

  it.each(['93.184.216.34', '[2606:2800:220:1:248:1893:25c8:1946]', 'hooks.example.com', '[::ffff:93.184.216.34]'])(
    'accepts https://%s/',
    (host) => {
      expect(strict.urlProblems(`https://${host}/hook`)).toEqual([]);
    },
  );

  it('wants https, no credentials, an absolute URL', () => {
    expect(strict.urlProblems('http://hooks.example.com/')[0]).toMatch(/https/);
    expect(strict.urlProblems('https://u:p@hooks.example.com/')[0]).toMatch(/credentials/);
    expect(strict.urlProblems('/relative')[0]).toMatch(/absolute/);
    expect(strict.urlProblems('ftp://hooks.example.com/')[0]).toMatch(/https/);
  });

  it('exempts allowed names (exact or *.suffix) and CIDRs from both rules', async () => {
    const allowing = addressPolicy(['hooks.internal', '*.corp.example', '10.20.0.0/16'], resolvingTo('10.20.1.2'));
    expect(allowing.urlProblems('http://hooks.internal:8080/x')).toEqual([]);
    expect(allowing.urlProblems('http://a.b.corp.example/x')).toEqual([]);
    expect(allowing.urlProblems('http://corp.example/x')).toHaveLength(1);
    expect(allowing.urlProblems('http://10.20.3.4/x')).toEqual([]);
    expect(allowing.urlProblems('https://10.21.0.1/x')).toHaveLength(1);
    // A public name resolving into an allowed CIDR may be reached; into another private one not.
    await expect(allowing.resolve(new URL('https://public.example.com/'))).resolves.toEqual({ address: '10.20.1.2', family: 4 });
    const elsewhere = addressPolicy(['10.20.0.0/16'], resolvingTo('10.30.0.1'));
    await expect(elsewhere.resolve(new URL('https://public.example.com/'))).rejects.toBeInstanceOf(ForbiddenTarget);
  });

  it('vets every resolved address at delivery time and connects to the one it vetted', async () => {
    const rebinding = addressPolicy([], async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    await expect(rebinding.resolve(new URL('https://hooks.example.com/'))).rejects.toThrow(/127\.0\.0\.1/);
    const fine = addressPolicy([], resolvingTo('2606:2800:220:1:248:1893:25c8:1946'));
    await expect(fine.resolve(new URL('https://hooks.example.com/'))).resolves.toEqual({
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
    expect(await addressPolicy([], resolvingTo('::1')).resolutionProblem('https://hooks.example.com/')).toMatch(/::1/);
    const unresolvable = addressPolicy([], async () => {
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    expect(await unresolvable.resolutionProblem('https://not-yet.example.com/')).toBe(null);
  });
});

describe('retry schedule', () => {
  it('waits about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up', () => {
    const now = new Date('2026-11-22T00:00:00Z');
    expect(MAX_ATTEMPTS).toBe(8);
    RETRY_DELAYS_MS.forEach((base, i) => {
      expect(nextAttemptAt(now, i + 1, () => 0)?.getTime()).toBe(now.getTime() + base * 0.9);
      expect(nextAttemptAt(now, i + 1, () => 1)?.getTime()).toBe(now.getTime() + base * 1.1);
    });
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(nextAttemptAt(now, 8)).toBe(null);
  });
});
