import { describe, expect, it } from 'vitest';
import { publicMessage } from '../../src/lib/errors.js';

describe('a failure as a tenant reads it', () => {
  it("cuts the server's absolute paths to their last component", () => {
    const err = new Error("ENOENT: no such file or directory, open '/var/lib/berth/accounts/acc_1/sites/s/public/index.php'");
    expect(publicMessage(err)).toBe("ENOENT: no such file or directory, open '…/index.php'");
    expect(publicMessage('Command failed: /usr/sbin/nginx -t -c /tmp/berth-1/nginx.conf')).toBe(
      'Command failed: …/nginx -t -c …/nginx.conf',
    );
    expect(publicMessage('nginx: [emerg] open() "/run/berth/nginx.pid" failed (13: Permission denied)')).toBe(
      'nginx: [emerg] open() "…/nginx.pid" failed (13: Permission denied)',
    );
    expect(publicMessage('mkdir /srv/berth/sites/')).toBe('mkdir …/sites/');
  });

  it('leaves what is not a path alone: URLs, media types, networks, ratios', () => {
    const text = 'GET https://acme.example/directory failed; text/html; 10.0.0.0/8; read/write; 1/2; a lone / here';
    expect(publicMessage(text)).toBe(text);
  });

  it('is at most the length asked for, and says what a thrown non-error was', () => {
    expect(publicMessage(new Error('x'.repeat(2000)))).toHaveLength(1000);
    expect(publicMessage('y'.repeat(50), 10)).toBe('y'.repeat(10));
    expect(publicMessage(42)).toBe('42');
  });
});
