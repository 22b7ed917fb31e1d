#!/usr/bin/env bash
# Starts a MariaDB of its own on ADDRESS:PORT (data, socket and logs in DIR/mariadb), as on any
# database server: up.sh's on 127.0.0.1, and one per server of the fleet test on its address.
# Berth gets an administrative account over TCP from the loopback addresses; root stays on the
# socket. No name resolution: users at '%' match any address. Writes DIR/db.env; stop with down.sh DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/wait-port.sh"
dir=$(realpath -m "${1:?usage: db-up.sh DIR ADDRESS [PORT]}")
address=${2:?usage: db-up.sh DIR ADDRESS [PORT]}
port=${3:-13306}
mkdir -p "$dir/mariadb/data" "$dir/mariadb/tmp"
cd "$dir"
# Which step failed, for a test whose directory is gone by the time anyone reads it.
trap 'echo "db-up.sh: line $LINENO exited with $?: $BASH_COMMAND" >>"$dir/mariadb/db-up.log"' ERR

password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
# Its own tmpdir: a bootstrapping server removes the `#sql` temporary tables it finds in its
# tmpdir, and in a shared /tmp those were another install's at work (about one install in two
# failed when a dozen ran at once).
mariadb-install-db --no-defaults --datadir="$dir/mariadb/data" --user=root --auth-root-authentication-method=socket \
  --skip-test-db --tmpdir="$dir/mariadb/tmp" >mariadb/install.log 2>&1
setsid mariadbd --no-defaults --datadir="$dir/mariadb/data" --user=root --bind-address="$address" --port="$port" \
  --socket="$dir/mariadb/mariadb.sock" --pid-file="$dir/mariadb/mariadb.pid" --tmpdir="$dir/mariadb/tmp" \
  --skip-name-resolve --skip-symbolic-links --log-error="$dir/mariadb/error.log" </dev/null >/dev/null 2>&1 &
mariadbd=$!
# Ready once its own socket answers: the port could answer for another process that took it since
# it was chosen, and then this server gives up (exit 75: choose another port).
for _ in $(seq 1 600); do
  mariadb-admin --no-defaults --socket="$dir/mariadb/mariadb.sock" -uroot ping >/dev/null 2>&1 && break
  if ! kill -0 "$mariadbd" 2>/dev/null; then
    grep -q 'Address already in use' "$dir/mariadb/error.log" 2>/dev/null && exit 75
    echo "MariaDB exited: see $dir/mariadb/error.log" >&2
    exit 1
  fi
  sleep 0.1
done
wait_port "$address" "$port" MariaDB 600
mariadb --no-defaults --socket="$dir/mariadb/mariadb.sock" -uroot -e \
  "CREATE OR REPLACE USER 'berth'@'127.0.0.0/255.0.0.0' IDENTIFIED BY '$password'; GRANT ALL PRIVILEGES ON *.* TO 'berth'@'127.0.0.0/255.0.0.0' WITH GRANT OPTION;"

cat >db.env <<CONF
BERTH_DRIVER_DB=mariadb
BERTH_MARIADB_URL=mysql://berth:$password@$address:$port
BERTH_IT_MARIADB=$address:$port
CONF
