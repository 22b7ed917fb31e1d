import { describe, expect, it } from 'vitest';
import { tableTypes } from '../../src/provisioning/drivers/dovecot-postfix.js';

describe('tableTypes (which tables need postmap)', () => {
  const config = [
    'virtual_mailbox_maps = texthash:/etc/berth/mail/virtual_mailbox_maps',
    'smtpd_recipient_restrictions = reject_unauth_destination, check_recipient_access proxy:hash:/etc/berth/mail/recipient_access',
    'transport_maps = hash:/etc/berth/mail/transport_old, texthash:/etc/berth/mail/transport',
    '127.0.0.1:587/inet/smtpd_sender_login_maps = hash:/etc/berth/mail/sender_login_maps',
    'other_maps = texthash:/etc/berth/mail/sender_login_maps',
  ].join('\n');

  it('names each type a file is read as, whatever precedes it (proxy:hash:), a longer name not counted', () => {
    expect(tableTypes(config, '/etc/berth/mail/virtual_mailbox_maps')).toEqual(new Set(['texthash']));
    expect(tableTypes(config, '/etc/berth/mail/recipient_access')).toEqual(new Set(['hash']));
    expect(tableTypes(config, '/etc/berth/mail/transport')).toEqual(new Set(['texthash']));
    expect(tableTypes(config, '/etc/berth/mail/sender_login_maps')).toEqual(new Set(['hash', 'texthash']));
    expect(tableTypes(config, '/etc/berth/mail/virtual_alias_maps')).toEqual(new Set());
  });
});
