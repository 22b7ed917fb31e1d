# Sourced by the daemon scripts.

# ports_free HOST PORT...: fails, saying which, when something already listens on one of them
# (daemons left up by an earlier run, which would otherwise fail later with a bind error).
ports_free() {
  local host=$1 port busy=()
  shift
  for port in "$@"; do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then busy+=("$port"); fi
  done
  if ((${#busy[@]})); then
    echo "$host: ports ${busy[*]} are in use; daemons left up by an earlier run stop with scripts/daemons/down.sh DIR" >&2
    return 1
  fi
}

# wait_port HOST PORT WHAT [TRIES]: waits until a daemon accepts
# connections on HOST:PORT, trying every 0.1 s (100 tries by default), or says which did not.
wait_port() {
  for _ in $(seq 1 "${4:-100}"); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$3 did not start listening on $1:$2" >&2
  return 1
}
