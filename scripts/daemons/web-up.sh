#!/usr/bin/env bash
# Starts a web server's daemons, nginx and a PHP-FPM master per installed PHP version, listening
# on ADDRESS (any of 127.0.0.0/8), with every configuration, pid and socket inside DIR. Writes
# DIR/web.env: the BERTH_* settings of Berth's web and PHP drivers for them. up.sh starts the
# control plane's own with it; a test starts one per agent. Stop with down.sh DIR. Needs root.
set -euo pipefail
. "$(dirname "$0")/wait-port.sh"
dir=$(realpath -m "${1:?usage: web-up.sh DIR ADDRESS HTTP_PORT HTTPS_PORT}")
address=${2:?address}
http_port=${3:?http port}
https_port=${4:?https port}
mkdir -p "$dir"
cd "$dir"

# --- nginx: includes the directory Berth writes server blocks into; a name it does not serve is a 404 ---
mkdir -p nginx/sites nginx/tmp
cat >nginx/nginx.conf <<CONF
user root;
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path $dir/nginx/tmp/body;
    proxy_temp_path $dir/nginx/tmp/proxy;
    fastcgi_temp_path $dir/nginx/tmp/fastcgi;
    uwsgi_temp_path $dir/nginx/tmp/uwsgi;
    scgi_temp_path $dir/nginx/tmp/scgi;
    server {
        listen $address:$http_port default_server;
        return 404;
    }
    include $dir/nginx/sites/*.conf;
}
CONF
nginx -c "$dir/nginx/nginx.conf" -t -q
nginx -c "$dir/nginx/nginx.conf"
wait_port "$address" "$http_port" nginx

# --- PHP-FPM: a master per installed version; Berth writes accounts' pools into DIR/php/<version>/pools.
# nginx runs as root here, so the web server's group is root. ---
php_versions=$(find /usr/sbin -maxdepth 1 -name 'php-fpm*' -printf '%f\n' 2>/dev/null | sed -n 's/^php-fpm\([0-9]*\.[0-9]*\)$/\1/p' | sort -rV | paste -sd, -)
mkdir -p php/run
for v in ${php_versions//,/ }; do
  mkdir -p "php/$v/pools"
  # A master refuses to start without a pool: an idle one stands in until Berth writes accounts' pools.
  cat >"php/$v/pools/berth-idle.conf" <<CONF
[berth-idle]
user = nobody
group = nogroup
listen = $dir/php/run/idle-$v.sock
pm = ondemand
pm.max_children = 1
CONF
  cat >"php/$v/php-fpm.conf" <<CONF
[global]
pid = $dir/php/run/php$v-fpm.pid
error_log = $dir/php/$v/error.log
daemonize = yes
process_control_timeout = 10s
include = $dir/php/$v/pools/*.conf
CONF
  "php-fpm$v" --fpm-config "$dir/php/$v/php-fpm.conf"
done

cat >web.env <<CONF
BERTH_DRIVER_WEB=nginx
BERTH_NGINX_CONF=$dir/nginx/nginx.conf
BERTH_NGINX_SITES_DIR=$dir/nginx/sites
BERTH_WEB_LISTEN=$address:$http_port
BERTH_WEB_LISTEN_TLS=$address:$https_port
BERTH_IT_HTTP=$address:$http_port
BERTH_IT_HTTPS=$address:$https_port
CONF
if [ -n "$php_versions" ]; then
  cat >>web.env <<CONF
BERTH_DRIVER_PHP=php-fpm
BERTH_PHP_VERSIONS=$php_versions
BERTH_PHP_POOL_DIR=$dir/php/{version}/pools
BERTH_PHP_FPM_CONF=$dir/php/{version}/php-fpm.conf
BERTH_PHP_FPM_PID=$dir/php/run/php{version}-fpm.pid
BERTH_PHP_SOCKET_DIR=$dir/php/run
BERTH_PHP_WEB_GROUP=root
BERTH_IT_PHP=$php_versions
CONF
fi
