#!/usr/bin/env bash
# Starts PowerDNS, nginx, Dovecot, Postfix, pebble (an ACME server), MariaDB, PHP-FPM, cron and sshd on loopback high ports, with every configuration,
# database, socket, spool and log inside DIR, for the integration suite (test/integration).
# Writes DIR/env: the BERTH_* settings that point Berth's drivers at them. Stop with down.sh DIR.
# Needs root (Postfix's master and Dovecot start as root and drop privileges).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/wait-port.sh"
dir=$(realpath -m "${1:?usage: up.sh DIR}")
mkdir -p "$dir"
cd "$dir"

pdns_port=${BERTH_IT_PDNS_PORT:-15353}
pdns_api_port=${BERTH_IT_PDNS_API_PORT:-18081}
http_port=${BERTH_IT_HTTP_PORT:-18080}
https_port=${BERTH_IT_HTTPS_PORT:-18443}
acme_port=${BERTH_IT_ACME_PORT:-14000}
acme_mgmt_port=${BERTH_IT_ACME_MGMT_PORT:-15000}
mariadb_port=${BERTH_IT_MARIADB_PORT:-13306}
ssh_port=${BERTH_IT_SSH_PORT:-12222}
ports_free 127.0.0.1 "$pdns_port" "$pdns_api_port" "$http_port" "$https_port" "$acme_port" "$acme_mgmt_port" "$mariadb_port" "$ssh_port"
api_key=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')

# --- PowerDNS (gsqlite3 backend, HTTP API) ---
mkdir -p pdns
rm -f pdns/pdns.sqlite3
sqlite3 pdns/pdns.sqlite3 </usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql
cat >pdns/pdns.conf <<CONF
launch=gsqlite3
gsqlite3-database=$dir/pdns/pdns.sqlite3
# Signed zones (Berth's keys imported through the API): the backend keeps keys and metadata.
gsqlite3-dnssec=yes
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

# --- Dovecot, OpenDKIM and Postfix, as on any mail server (mail-up.sh writes their settings into mail.env) ---
"$here/mail-up.sh" "$dir" 127.0.0.1

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

# --- MariaDB, as on any database server (db-up.sh writes its settings into db.env) ---
"$here/db-up.sh" "$dir" 127.0.0.1 "$mariadb_port"

# --- cron: Debian's, in the foreground, reading the system's /etc/cron.d (where Berth writes each
# account's file); one per machine, so a cron already running is used as it is ---
mkdir -p cron
if ! pgrep -x cron >/dev/null; then
  setsid cron -f -L 0 </dev/null >cron/cron.log 2>&1 &
  echo $! >cron/cron.pid
fi

# --- sshd: one of its own on a loopback port, whose configuration includes the drop-in Berth writes.
# Its directory is not under DIR: sshd refuses key files and chroots below a directory others may
# write, and DIR is usually in /tmp. ---
ssh_dir=/run/berth-it-$(basename "$dir")
rm -rf "$ssh_dir"
mkdir -p -m 755 "$ssh_dir" "$ssh_dir/sshd_config.d" /run/sshd
ln -sfn "$ssh_dir" ssh
ssh-keygen -q -t ed25519 -N '' -f "$ssh_dir/host_ed25519_key"
cat >"$ssh_dir/sshd_config" <<CONF
Include $ssh_dir/sshd_config.d/*.conf
ListenAddress 127.0.0.1:$ssh_port
HostKey $ssh_dir/host_ed25519_key
PidFile $ssh_dir/sshd.pid
# Container-friendly: no PAM (pam_loginuid fails without CAP_AUDIT_CONTROL); Berth makes its
# users' passwords '*' rather than locked, which sshd without PAM would refuse.
UsePAM no
PermitRootLogin no
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthorizedKeysFile none
Subsystem sftp internal-sftp
LogLevel VERBOSE
CONF
/usr/sbin/sshd -t -f "$ssh_dir/sshd_config"
/usr/sbin/sshd -f "$ssh_dir/sshd_config" -E "$ssh_dir/sshd.log"
wait_port 127.0.0.1 "$ssh_port" sshd

cat >env <<CONF
BERTH_DRIVER_SSH=openssh
BERTH_SSH_DIR=$ssh_dir
BERTH_SSH_PID_FILE=$ssh_dir/sshd.pid
BERTH_SSH_PORT=$ssh_port
BERTH_SSH_LOG=$ssh_dir/sshd.log
BERTH_SSH_COLLECT_MS=500
BERTH_IT_SSH=127.0.0.1:$ssh_port
BERTH_DRIVER_CRON=cron
BERTH_CRON_DIR=/etc/cron.d
BERTH_SMTP_URL=smtp://127.0.0.1:${BERTH_IT_SMTP_PORT:-12525}
BERTH_DRIVER_DNS=powerdns
BERTH_PDNS_API_URL=http://127.0.0.1:$pdns_api_port
BERTH_PDNS_API_KEY=$api_key
BERTH_IT_DNS=127.0.0.1:$pdns_port
BERTH_IT_ACME_DIRECTORY_URL=https://127.0.0.1:$acme_port/dir
BERTH_IT_ACME_CA_FILE=$dir/acme/ca.pem
BERTH_IT_ACME_ROOTS_URL=https://127.0.0.1:$acme_mgmt_port/roots/0
BERTH_MAIL_HOST=mail.berth.test
BERTH_IT_DAEMONS=$dir
CONF
cat web.env mail.env db.env >>env
echo "daemons up; settings in $dir/env"
