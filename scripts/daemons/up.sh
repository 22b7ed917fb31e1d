#!/usr/bin/env bash
# Starts PowerDNS, nginx, Dovecot, Postfix, pebble (an ACME server), MariaDB and PHP-FPM on loopback high ports, with every configuration,
# database, socket, spool and log inside DIR, for the integration suite (test/integration).
# Writes DIR/env: the BERTH_* settings that point Berth's drivers at them. Stop with down.sh DIR.
# Needs root (Postfix's master and Dovecot start as root and drop privileges).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(realpath -m "${1:?usage: up.sh DIR}")
mkdir -p "$dir"
cd "$dir"

pdns_port=${BERTH_IT_PDNS_PORT:-15353}
pdns_api_port=${BERTH_IT_PDNS_API_PORT:-18081}
http_port=${BERTH_IT_HTTP_PORT:-18080}
https_port=${BERTH_IT_HTTPS_PORT:-18443}
acme_port=${BERTH_IT_ACME_PORT:-14000}
acme_mgmt_port=${BERTH_IT_ACME_MGMT_PORT:-15000}
imap_port=${BERTH_IT_IMAP_PORT:-11143}
lmtp_port=${BERTH_IT_LMTP_PORT:-12424}
smtp_port=${BERTH_IT_SMTP_PORT:-12525}
submission_port=${BERTH_IT_SUBMISSION_PORT:-12587}
auth_port=${BERTH_IT_AUTH_PORT:-12426}
dkim_port=${BERTH_IT_DKIM_PORT:-12891}
mariadb_port=${BERTH_IT_MARIADB_PORT:-13306}
api_key=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
# Mail is stored as an unprivileged user; Dovecot refuses to access mail as root.
mail_uid=$(id -u nobody)
mail_gid=$(getent group nogroup | cut -d: -f3)

wait_port() { # host port what [tries of 0.1 s]
  for _ in $(seq 1 "${4:-100}"); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$3 did not start listening on $1:$2" >&2
  return 1
}

# --- PowerDNS (gsqlite3 backend, HTTP API) ---
mkdir -p pdns
rm -f pdns/pdns.sqlite3
sqlite3 pdns/pdns.sqlite3 </usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql
cat >pdns/pdns.conf <<CONF
launch=gsqlite3
gsqlite3-database=$dir/pdns/pdns.sqlite3
local-address=127.0.0.1
local-port=$pdns_port
socket-dir=$dir/pdns
api=yes
api-key=$api_key
webserver=yes
webserver-address=127.0.0.1
webserver-port=$pdns_api_port
webserver-allow-from=127.0.0.0/8
# ALIAS records (apex flattening): answered with the target's addresses, resolved by asking this
# server itself (the targets the tests use are zones it serves; no network needed).
expand-alias=yes
resolver=127.0.0.1:$pdns_port
guardian=no
daemon=yes
loglevel=4
CONF
pdns_server --config-dir="$dir/pdns" --config-name= >pdns/start.log 2>&1
wait_port 127.0.0.1 "$pdns_api_port" PowerDNS

# --- nginx and PHP-FPM, as on any web server (web-up.sh writes their settings into web.env) ---
"$here/web-up.sh" "$dir" 127.0.0.1 "$http_port" "$https_port"

# --- Mail maps: Berth writes passwd (Dovecot) and the Postfix tables here ---
# passwd is written 0640: the directory's setgid bit gives it Dovecot's group (auth runs as dovecot).
mkdir -p mail
chgrp dovecot mail
chmod 2755 mail
touch mail/passwd mail/virtual_mailbox_domains mail/virtual_mailbox_maps mail/virtual_alias_maps mail/sender_login_maps \
  mail/dkim_key_table mail/dkim_signing_table

# --- Dovecot: IMAP and LMTP, passwd-file auth, Maildir quota ---
mkdir -p dovecot/run dovecot/state
cat >dovecot/dovecot.conf <<CONF
base_dir = $dir/dovecot/run
state_dir = $dir/dovecot/state
log_path = $dir/dovecot/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# Tests probe logins until they work: no penalty delay after a failed one.
auth_failure_delay = 0
mail_uid = $mail_uid
mail_gid = $mail_gid
first_valid_uid = 1
mail_plugins = quota
passdb {
  driver = passwd-file
  args = scheme=ARGON2ID username_format=%u $dir/mail/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%u $dir/mail/passwd
}
plugin {
  quota = maildir:User quota
  sieve = file:~/sieve;active=~/.dovecot.sieve
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $imap_port
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $lmtp_port
  }
}
# SASL for Postfix's submission service.
service auth {
  inet_listener auth-postfix {
    address = 127.0.0.1
    port = $auth_port
  }
}
# Autoresponders: the Sieve script Berth writes into a mailbox's home runs at delivery (Pigeonhole);
# vacation replies leave through Postfix's SMTP service.
protocol lmtp {
  mail_plugins = \$mail_plugins sieve
}
submission_host = 127.0.0.1:$smtp_port
protocol imap {
  mail_plugins = \$mail_plugins imap_quota
}
CONF
dovecot -c "$dir/dovecot/dovecot.conf"
wait_port 127.0.0.1 "$imap_port" Dovecot

# --- OpenDKIM: signs what the submission service passes it, with the keys and tables Berth writes ---
mkdir -p opendkim
cat >opendkim/opendkim.conf <<CONF
Syslog no
Mode s
Socket inet:$dkim_port@127.0.0.1
PidFile $dir/opendkim/opendkim.pid
KeyTable refile:$dir/mail/dkim_key_table
SigningTable refile:$dir/mail/dkim_signing_table
Canonicalization relaxed/simple
SignatureAlgorithm rsa-sha256
# The test directories live under /tmp (world-writable): its keys are 0600 all the same.
RequireSafeKeys false
CONF
setsid opendkim -x "$dir/opendkim/opendkim.conf" </dev/null
wait_port 127.0.0.1 "$dkim_port" OpenDKIM

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
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
maillog_file_prefixes = $dir/postfix
maillog_file = $dir/postfix/maillog
virtual_mailbox_domains = hash:$dir/mail/virtual_mailbox_domains
virtual_mailbox_maps = hash:$dir/mail/virtual_mailbox_maps
virtual_alias_maps = hash:$dir/mail/virtual_alias_maps
virtual_transport = lmtp:inet:127.0.0.1:$lmtp_port
smtpd_recipient_restrictions = reject_unauth_destination
CONF
cat >postfix/master.cf <<CONF
127.0.0.1:$smtp_port inet n - n - - smtpd
127.0.0.1:$submission_port inet n - n - - smtpd
  -o syslog_name=postfix/submission
  -o smtpd_tls_security_level=encrypt
  -o smtpd_tls_cert_file=$dir/mail/tls/mail.crt
  -o smtpd_tls_key_file=$dir/mail/tls/mail.key
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_sasl_type=dovecot
  -o smtpd_sasl_path=inet:127.0.0.1:$auth_port
  -o smtpd_sender_login_maps=hash:$dir/mail/sender_login_maps
  -o smtpd_sender_restrictions=reject_sender_login_mismatch
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
  -o smtpd_milters=inet:127.0.0.1:$dkim_port
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
for map in virtual_mailbox_domains virtual_mailbox_maps virtual_alias_maps sender_login_maps; do postmap -c "$dir/postfix" "hash:$dir/mail/$map"; done
postfix -c "$dir/postfix" start
wait_port 127.0.0.1 "$smtp_port" Postfix

# --- pebble: an ACME server that resolves names through the test PowerDNS and validates HTTP-01
# against nginx's plain-HTTP port; its own HTTPS uses a throwaway certificate (acme/ca.pem) ---
mkdir -p acme
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout acme/key.pem -out acme/ca.pem 2>/dev/null
cat >acme/pebble.json <<CONF
{
  "pebble": {
    "listenAddress": "127.0.0.1:$acme_port",
    "managementListenAddress": "127.0.0.1:$acme_mgmt_port",
    "certificate": "$dir/acme/ca.pem",
    "privateKey": "$dir/acme/key.pem",
    "httpPort": $http_port,
    "tlsPort": $https_port,
    "ocspResponderURL": "",
    "externalAccountBindingRequired": false
  }
}
CONF
# No artificial validation delays, no spurious badNonce, no reused authorizations (a name that stops
# resolving must fail the next order): the tests measure Berth, not pebble's chaos.
PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 PEBBLE_AUTHZREUSE=0 setsid pebble -config acme/pebble.json -dnsserver "127.0.0.1:$pdns_port" -strict=false \
  >acme/pebble.log 2>&1 </dev/null &
echo $! >acme/pebble.pid
wait_port 127.0.0.1 "$acme_port" pebble

# --- MariaDB: a server of its own (data, socket, logs in DIR/mariadb); Berth gets an administrative
# account over TCP, root stays on the socket. No name resolution: users at '%' match 127.0.0.1. ---
mkdir -p mariadb/data mariadb/tmp
mariadb_password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
mariadb-install-db --no-defaults --datadir="$dir/mariadb/data" --user=root --auth-root-authentication-method=socket \
  --skip-test-db >mariadb/install.log 2>&1
setsid mariadbd --no-defaults --datadir="$dir/mariadb/data" --user=root --bind-address=127.0.0.1 --port="$mariadb_port" \
  --socket="$dir/mariadb/mariadb.sock" --pid-file="$dir/mariadb/mariadb.pid" --tmpdir="$dir/mariadb/tmp" \
  --skip-name-resolve --log-error="$dir/mariadb/error.log" </dev/null >/dev/null 2>&1 &
wait_port 127.0.0.1 "$mariadb_port" MariaDB 600
mariadb --no-defaults --socket="$dir/mariadb/mariadb.sock" -uroot -e \
  "CREATE USER 'berth'@'127.0.0.1' IDENTIFIED BY '$mariadb_password'; GRANT ALL PRIVILEGES ON *.* TO 'berth'@'127.0.0.1' WITH GRANT OPTION;"

cat >env <<CONF
BERTH_DRIVER_DNS=powerdns
BERTH_PDNS_API_URL=http://127.0.0.1:$pdns_api_port
BERTH_PDNS_API_KEY=$api_key
BERTH_IT_DNS=127.0.0.1:$pdns_port
BERTH_IT_ACME_DIRECTORY_URL=https://127.0.0.1:$acme_port/dir
BERTH_IT_ACME_CA_FILE=$dir/acme/ca.pem
BERTH_IT_ACME_ROOTS_URL=https://127.0.0.1:$acme_mgmt_port/roots/0
BERTH_DRIVER_MAIL=dovecot-postfix
BERTH_MAIL_MAPS_DIR=$dir/mail
BERTH_MAIL_HOST=mail.berth.test
BERTH_MAIL_OWNER=$mail_uid:$mail_gid
BERTH_POSTFIX_CONFIG_DIR=$dir/postfix
BERTH_DOVECOT_CONF=$dir/dovecot/dovecot.conf
BERTH_OPENDKIM_PID=$dir/opendkim/opendkim.pid
BERTH_IT_DKIM=127.0.0.1:$dkim_port
BERTH_IT_SUBMISSION=127.0.0.1:$submission_port
BERTH_IT_IMAP=127.0.0.1:$imap_port
BERTH_IT_SMTP=127.0.0.1:$smtp_port
BERTH_DRIVER_DB=mariadb
BERTH_MARIADB_URL=mysql://berth:$mariadb_password@127.0.0.1:$mariadb_port
BERTH_IT_MARIADB=127.0.0.1:$mariadb_port
BERTH_IT_DAEMONS=$dir
CONF
cat web.env >>env
echo "daemons up; settings in $dir/env"
