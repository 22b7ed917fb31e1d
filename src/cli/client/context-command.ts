import { Command } from 'commander';
import { readContexts, writeContexts } from './contexts.js';
import { UsageError } from './errors.js';
import type { Runtime } from './runtime.js';

/** `berth context add|use|list|remove`: named servers and tokens, one of them current. */
export function contextCommand(rt: Runtime): Command {
  const cmd = new Command('context').description('Named servers and tokens (kept in ~/.config/berth/config.json, mode 0600)');
  cmd
    .command('add <name>')
    .description('Add or replace a context, and make it current')
    .requiredOption('--url <url>', "the server's base URL, e.g. https://api.hosting.example")
    .requiredOption('--token <token>', 'an API token (berth_...)')
    .action((name: string, o: { url: string; token: string }) => {
      if (!/^https?:\/\/[^\s]+$/.test(o.url)) throw new UsageError('--url must be an http(s) URL');
      const file = readContexts(rt.env);
      file.contexts[name] = { url: o.url.replace(/\/+$/, ''), token: o.token };
      file.current = name;
      writeContexts(rt.env, file);
      rt.say(`Context "${name}" added and in use.`);
    });
  cmd
    .command('use <name>')
    .description('Make a context current')
    .action((name: string) => {
      const file = readContexts(rt.env);
      if (!file.contexts[name]) throw new UsageError(`no context named "${name}"`);
      writeContexts(rt.env, { ...file, current: name });
      rt.say(`Using context "${name}".`);
    });
  cmd
    .command('list')
    .description('The contexts (tokens not shown)')
    .action(() => {
      const file = readContexts(rt.env);
      const rows = Object.entries(file.contexts).map(([name, c]) => ({ name, url: c.url, current: name === file.current }));
      rt.print(rows, ['name', 'url', 'current']);
    });
  cmd
    .command('remove <name>')
    .description('Forget a context')
    .action((name: string) => {
      const file = readContexts(rt.env);
      if (!file.contexts[name]) throw new UsageError(`no context named "${name}"`);
      delete file.contexts[name];
      writeContexts(rt.env, { ...file, current: file.current === name ? null : file.current });
    });
  return cmd;
}
