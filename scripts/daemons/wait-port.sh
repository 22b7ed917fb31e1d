# Sourced by the daemon scripts. wait_port HOST PORT WHAT [TRIES]: waits until a daemon accepts
# connections on HOST:PORT, trying every 0.1 s (100 tries by default), or says which did not.
wait_port() {
  for _ in $(seq 1 "${4:-100}"); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$3 did not start listening on $1:$2" >&2
  return 1
}
