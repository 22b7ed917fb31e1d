-- PHP sites: a runtime per site (`static` or `php-<major>.<minor>`), the site's PHP
-- settings, and the plan's PHP workers (PHP-FPM's pm.max_children of each of an account's pools).

ALTER TABLE sites DROP CONSTRAINT sites_runtime_check;
ALTER TABLE sites ADD CONSTRAINT sites_runtime_check CHECK (runtime ~ '^(static|php-[0-9]+\.[0-9]+)$');
ALTER TABLE sites ADD COLUMN php jsonb NOT NULL
  DEFAULT '{"memory_limit_mb": 128, "upload_max_filesize_mb": 64, "max_execution_time_s": 30, "display_errors": false}';

ALTER TABLE plans ADD COLUMN php_workers integer NOT NULL DEFAULT 5 CHECK (php_workers BETWEEN 1 AND 1000);
