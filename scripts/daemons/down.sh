#!/usr/bin/env bash
# Stops what up.sh DIR started (and only that): each daemon by its own pid file or config.
set -uo pipefail
dir=$(realpath -m "${1:?usage: down.sh DIR}")
[ -f "$dir/postfix/main.cf" ] && postfix -c "$dir/postfix" stop >/dev/null 2>&1
[ -f "$dir/dovecot/dovecot.conf" ] && doveadm -c "$dir/dovecot/dovecot.conf" stop >/dev/null 2>&1
[ -f "$dir/nginx/nginx.pid" ] && nginx -c "$dir/nginx/nginx.conf" -s stop >/dev/null 2>&1
[ -f "$dir/acme/pebble.pid" ] && kill "$(cat "$dir/acme/pebble.pid")" 2>/dev/null
for pid in "$dir"/php/run/php*-fpm.pid; do [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null; done
[ -f "$dir/mariadb/mariadb.pid" ] && kill "$(cat "$dir/mariadb/mariadb.pid")" 2>/dev/null
[ -f "$dir/opendkim/opendkim.pid" ] && kill "$(cat "$dir/opendkim/opendkim.pid")" 2>/dev/null
[ -f "$dir/cron/cron.pid" ] && kill "$(cat "$dir/cron/cron.pid")" 2>/dev/null
[ -f "$dir/pdns/pdns.pid" ] && kill "$(cat "$dir/pdns/pdns.pid")" 2>/dev/null
ssh_dir=/run/berth-it-$(basename "$dir")
[ -f "$ssh_dir/sshd.pid" ] && kill "$(cat "$ssh_dir/sshd.pid")" 2>/dev/null
rm -rf "$ssh_dir"
exit 0
