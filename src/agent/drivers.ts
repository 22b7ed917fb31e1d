import type { CronDriver, DatabaseDriver, MailDriver, PhpDriver, SshDriver, WebDriver } from '../provisioning/driver.js';

/** The local drivers an agent applies its server's units with. */
export interface AgentDrivers {
  database: DatabaseDriver;
  web: WebDriver;
  php: PhpDriver;
  mail: MailDriver;
  cron: CronDriver;
  ssh: SshDriver;
}
