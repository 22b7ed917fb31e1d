import { createHash } from 'node:crypto';
/**
 * PHP-FPM pools: one per hosting account and PHP version, running as the account's
 * Unix user, started on demand, confined to the account's home and temporary directory. A
 * site's own settings travel with each request from nginx (`PHP_VALUE`), so the sites of one
 * account share its pool.
 */
import { type Static, Type } from 'typebox';

export interface PhpPoolSpec {
  /** The account's username; the pool and its Unix user are named after it. */
  username: string;
  version: string;
  /** The account's home (open_basedir) and its temporary directory inside it. */
  home: string;
  tmp: string;
  /** `pm.max_children`: the plan's `php_workers`. */
  workers: number;
}

/** A site's PHP settings, as the API takes them and the renderers write them: one declaration. */
export const PHP_SETTINGS_FIELDS = {
  memory_limit_mb: Type.Integer({ minimum: 16, maximum: 2048, format: 'int32', description: '`memory_limit`. Default 128.' }),
  upload_max_filesize_mb: Type.Integer({
    minimum: 1,
    maximum: 1024,
    format: 'int32',
    description: "`upload_max_filesize` and `post_max_size`, and the web server's largest request body. Default 64.",
  }),
  max_execution_time_s: Type.Integer({
    minimum: 1,
    maximum: 600,
    format: 'int32',
    description: '`max_execution_time`. Default 30.',
  }),
  display_errors: Type.Boolean({ description: '`display_errors`. Default false.' }),
};
export const PhpSettings = Type.Object(PHP_SETTINGS_FIELDS);
export type PhpSettings = Static<typeof PhpSettings>;

export const DEFAULT_PHP_SETTINGS: PhpSettings = {
  memory_limit_mb: 128,
  upload_max_filesize_mb: 64,
  max_execution_time_s: 30,
  display_errors: false,
};

/**
 * The Unix user of an account: `berth-<username>`, or (Linux user names stop at 32 characters)
 * a shortened name with a digest that keeps it unique.
 */
export function unixUser(username: string): string {
  const name = `berth-${username}`;
  return name.length <= 32
    ? name
    : `berth-${username.slice(0, 19)}-${createHash('sha256').update(username).digest('hex').slice(0, 6)}`;
}

const PATH = /^\/[A-Za-z0-9._/-]+$/;
const WORD = /^[a-z_][a-z0-9_-]{0,31}$/;
function checked(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value))
    throw new Error(`refusing an unsafe ${what} in a PHP-FPM pool: ${JSON.stringify(value.slice(0, 100))}`);
  return value;
}

/** Functions that would step around open_basedir (a shell reads any file the user may). */
const DISABLED = ['exec', 'passthru', 'shell_exec', 'system', 'proc_open', 'popen', 'pcntl_exec'];

export function renderPool(p: PhpPoolSpec, o: { user: string; socket: string; webGroup: string }): string {
  const user = checked(o.user, WORD, 'user');
  const home = checked(p.home, PATH, 'home');
  const tmp = checked(p.tmp, PATH, 'temporary directory');
  return [
    `; The PHP ${p.version} pool of account ${checked(p.username, WORD, 'username')}, rendered by Berth.`,
    `[${user}]`,
    `user = ${user}`,
    `group = ${user}`,
    `listen = ${checked(o.socket, PATH, 'socket')}`,
    `listen.owner = ${user}`,
    `listen.group = ${checked(o.webGroup, WORD, 'group')}`,
    'listen.mode = 0660',
    'pm = ondemand',
    `pm.max_children = ${Math.max(1, Math.trunc(p.workers))}`,
    'pm.process_idle_timeout = 10s',
    'pm.max_requests = 500',
    'chdir = /',
    'security.limit_extensions = .php',
    `php_admin_value[open_basedir] = ${home}/:${tmp}/`,
    `php_admin_value[upload_tmp_dir] = ${tmp}`,
    `php_admin_value[sys_temp_dir] = ${tmp}`,
    `php_admin_value[session.save_path] = ${tmp}`,
    `php_admin_value[disable_functions] = ${DISABLED.join(',')}`,
    'php_admin_flag[allow_url_include] = off',
    '',
  ].join('\n');
}

/** The settings as nginx hands them to PHP-FPM (`fastcgi_param PHP_VALUE`), one per line. */
export function phpValue(s: PhpSettings): string {
  const n = (v: number) => Math.max(0, Math.trunc(v));
  return [
    `memory_limit=${n(s.memory_limit_mb)}M`,
    `upload_max_filesize=${n(s.upload_max_filesize_mb)}M`,
    `post_max_size=${n(s.upload_max_filesize_mb)}M`,
    `max_execution_time=${n(s.max_execution_time_s)}`,
    `display_errors=${s.display_errors ? 'On' : 'Off'}`,
  ].join('\\n');
}
