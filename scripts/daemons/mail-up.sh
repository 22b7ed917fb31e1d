#!/usr/bin/env bash
# Starts a mail server's daemons, Dovecot (IMAP, LMTP, SASL), OpenDKIM and Postfix (SMTP and
# submission), listening on ADDRESS (any of 127.0.0.0/8), with every configuration, map, spool and
# log inside DIR. Writes DIR/mail.env: the BERTH_* settings of Berth's mail driver for them. up.sh
# starts the control plane's own with it; a test starts one per agent. Ports come from
# BERTH_IT_*_PORT (the same numbers serve on each address). Stop with down.sh DIR. Needs root.
set -euo pipefail
. "$(dirname "$0")/wait-port.sh"
dir=$(realpath -m "${1:?usage: mail-up.sh DIR ADDRESS}")
address=${2:?address}
imap_port=${BERTH_IT_IMAP_PORT:-11143}
lmtp_port=${BERTH_IT_LMTP_PORT:-12424}
smtp_port=${BERTH_IT_SMTP_PORT:-12525}
submission_port=${BERTH_IT_SUBMISSION_PORT:-12587}
auth_port=${BERTH_IT_AUTH_PORT:-12426}
dkim_port=${BERTH_IT_DKIM_PORT:-12891}
ports_free "$address" "$imap_port" "$lmtp_port" "$smtp_port" "$submission_port" "$auth_port" "$dkim_port"
# Mail is stored as an unprivileged user; Dovecot refuses to access mail as root.
mail_uid=$(id -u nobody)
mail_gid=$(getent group nogroup | cut -d: -f3)
mkdir -p "$dir"
# Postfix's and Dovecot's unprivileged processes open their files below DIR.
chmod 755 "$dir"
cd "$dir"

# --- Mail maps: Berth writes users.dict (Dovecot) and the Postfix tables here ---
# users.dict (and passwd) are written 0640: the directory's setgid bit gives them Dovecot's group (auth runs as dovecot).
mkdir -p mail
chgrp dovecot mail
chmod 2755 mail
touch mail/users.dict mail/passwd mail/virtual_mailbox_domains mail/virtual_mailbox_maps mail/virtual_alias_maps mail/sender_login_maps mail/recipient_access mail/transport \
  mail/dkim_key_table mail/dkim_signing_table

# --- Dovecot: IMAP and LMTP, users from a dict file (looked at on every login), Maildir quota ---
mkdir -p dovecot/run dovecot/state
cat >dovecot/auth-dict.conf.ext <<CONF
uri = file:$dir/mail/users.dict
default_pass_scheme = ARGON2ID
iterate_disable = yes
key passdb {
  key = passdb/%u
  format = json
}
key userdb {
  key = userdb/%u
  format = json
}
passdb_objects = passdb
userdb_objects = userdb
CONF
cat >dovecot/dovecot.conf <<CONF
base_dir = $dir/dovecot/run
state_dir = $dir/dovecot/state
log_path = $dir/dovecot/dovecot.log
protocols = imap lmtp
listen = $address
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# Tests probe logins until they work: no penalty delay after a failed one.
auth_failure_delay = 0
# A cache, as busy servers have: a changed password or a suspension counts only once Berth has
# flushed it, which the tests of those prove.
auth_cache_size = 1M
mail_uid = $mail_uid
mail_gid = $mail_gid
first_valid_uid = 1
mail_plugins = quota
passdb {
  driver = dict
  args = $dir/dovecot/auth-dict.conf.ext
}
userdb {
  driver = dict
  args = $dir/dovecot/auth-dict.conf.ext
}
plugin {
  quota = maildir:User quota
  sieve = file:~/sieve;active=~/.dovecot.sieve
}
service imap-login {
  inet_listener imap {
    address = $address
    port = $imap_port
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = $address
    port = $lmtp_port
  }
}
# SASL for Postfix's submission service.
service auth {
  inet_listener auth-postfix {
    address = $address
    port = $auth_port
  }
}
# Autoresponders: the Sieve script Berth writes into a mailbox's home runs at delivery (Pigeonhole);
# vacation replies leave through Postfix's SMTP service.
protocol lmtp {
  mail_plugins = \$mail_plugins sieve
}
submission_host = $address:$smtp_port
protocol imap {
  mail_plugins = \$mail_plugins imap_quota
}
CONF
dovecot -c "$dir/dovecot/dovecot.conf"
wait_port "$address" "$imap_port" Dovecot

# --- OpenDKIM: signs what the submission service passes it, with the keys and tables Berth writes ---
mkdir -p opendkim
cat >opendkim/opendkim.conf <<CONF
Syslog no
Mode s
Socket inet:$dkim_port@$address
PidFile $dir/opendkim/opendkim.pid
KeyTable refile:$dir/mail/dkim_key_table
SigningTable refile:$dir/mail/dkim_signing_table
Canonicalization relaxed/simple
SignatureAlgorithm rsa-sha256
# The test directories live under /tmp (world-writable): its keys are 0600 all the same.
RequireSafeKeys false
CONF
setsid opendkim -x "$dir/opendkim/opendkim.conf" </dev/null
wait_port "$address" "$dkim_port" OpenDKIM

# --- Postfix: SMTP on a high port, mailboxes handed to Dovecot over LMTP (quota enforced there); submission
# with STARTTLS and AUTH through Dovecot, senders limited to what they own, signed. The certificate is the
# mail host's, which Berth writes into mail/tls/ (BERTH_MAIL_HOST); a throwaway one stands there until then ---
mkdir -p postfix mail/tls
chmod 700 mail/tls
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 -subj /CN=mx.berth.test \
  -keyout mail/tls/mail.key -out mail/tls/mail.crt 2>/dev/null
mkdir -p postfix/spool postfix/data
chown postfix: postfix/data
cp /etc/postfix/dynamicmaps.cf postfix/ 2>/dev/null || true
[ -d /etc/postfix/dynamicmaps.cf.d ] && cp -r /etc/postfix/dynamicmaps.cf.d postfix/
cat >postfix/main.cf <<CONF
compatibility_level = 3.6
queue_directory = $dir/postfix/spool
data_directory = $dir/postfix/data
mail_owner = postfix
myhostname = mx.berth.test
mydestination =
# No local delivery, so no local aliases (the defaults, hash:/etc/aliases and NIS, log an error
# and a warning at every smtpd start on a machine without them).
alias_maps =
alias_database =
# Postfix takes only an interface's own address here (127.0.0.11 is routed to lo, not its
# address); each service below binds ADDRESS itself.
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
maillog_file_prefixes = $dir/postfix
maillog_file = $dir/postfix/maillog
# The tables a mailbox changes are texthash: (read when a Postfix process starts; Berth's reload
# starts them afresh, no postmap); the two a move changes stay hash:, so the postmap path keeps
# running on a real Postfix too.
virtual_mailbox_domains = texthash:$dir/mail/virtual_mailbox_domains
virtual_mailbox_maps = texthash:$dir/mail/virtual_mailbox_maps
virtual_alias_maps = texthash:$dir/mail/virtual_alias_maps
virtual_transport = lmtp:inet:$address:$lmtp_port
smtpd_recipient_restrictions = reject_unauth_destination, check_recipient_access hash:$dir/mail/recipient_access
transport_maps = hash:$dir/mail/transport
CONF
cat >postfix/master.cf <<CONF
$address:$smtp_port inet n - n - - smtpd
$address:$submission_port inet n - n - - smtpd
  -o syslog_name=postfix/submission
  -o smtpd_tls_security_level=encrypt
  -o smtpd_tls_cert_file=$dir/mail/tls/mail.crt
  -o smtpd_tls_key_file=$dir/mail/tls/mail.key
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_sasl_type=dovecot
  -o smtpd_sasl_path=inet:$address:$auth_port
  -o smtpd_sender_login_maps=texthash:$dir/mail/sender_login_maps
  -o smtpd_sender_restrictions=reject_sender_login_mismatch
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
  -o smtpd_milters=inet:$address:$dkim_port
  -o milter_default_action=tempfail
pickup    unix  n       -       n       60      1       pickup
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
CONF
for map in recipient_access transport; do postmap -c "$dir/postfix" "hash:$dir/mail/$map"; done
postfix -c "$dir/postfix" start
wait_port "$address" "$smtp_port" Postfix

cat >mail.env <<CONF
BERTH_DRIVER_MAIL=dovecot-postfix
BERTH_MAIL_MAPS_DIR=$dir/mail
BERTH_MAIL_OWNER=$mail_uid:$mail_gid
BERTH_POSTFIX_CONFIG_DIR=$dir/postfix
BERTH_DOVECOT_CONF=$dir/dovecot/dovecot.conf
BERTH_OPENDKIM_PID=$dir/opendkim/opendkim.pid
BERTH_MAIL_RELAY_PORT=$smtp_port
BERTH_IT_DKIM=$address:$dkim_port
BERTH_IT_SUBMISSION=$address:$submission_port
BERTH_IT_IMAP=$address:$imap_port
BERTH_IT_SMTP=$address:$smtp_port
CONF
