#!/usr/bin/env bash
# Stops what up.sh DIR started (and only that): each daemon by its own pid file or config, and
# waits (up to 10 s) until those it stopped by their pid have exited: an up.sh right after finds
# their ports free (OpenDKIM took a moment to let go of its port).
set -uo pipefail
dir=$(realpath -m "${1:?usage: down.sh DIR}")
stopped=()
# stop PIDFILE: signals the process the file names, and remembers it.
stop() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null && stopped+=("$pid")
}
[ -f "$dir/postfix/main.cf" ] && postfix -c "$dir/postfix" stop >/dev/null 2>&1
[ -f "$dir/dovecot/dovecot.conf" ] && doveadm -c "$dir/dovecot/dovecot.conf" stop >/dev/null 2>&1
stop "$dir/nginx/nginx.pid"
stop "$dir/acme/pebble.pid"
for pid in "$dir"/php/run/php*-fpm.pid; do stop "$pid"; done
stop "$dir/mariadb/mariadb.pid"
stop "$dir/opendkim/opendkim.pid"
stop "$dir/cron/cron.pid"
stop "$dir/pdns/pdns.pid"
ssh_dir=/run/berth-it-$(basename "$dir")
stop "$ssh_dir/sshd.pid"
rm -rf "$ssh_dir"
for _ in $(seq 1 100); do
  alive=0
  for pid in "${stopped[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
  ((alive)) || break
  sleep 0.1
done
exit 0
