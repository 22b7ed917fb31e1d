import { execFile } from 'node:child_process';
import { connect } from 'node:net';

/** The answer to our one request (id 1): `OK 1 <entries flushed>`, or FAIL / NOTFOUND. */
const ANSWER = /^(OK|FAIL|NOTFOUND)\t1(?:\t(.*))?$/m;

/**
 * `doveadm auth cache flush` without starting a process: the same request on Dovecot's
 * auth-master socket (`<base_dir>/auth-master`), which is what doveadm sends — `VERSION 1 0`,
 * then `CACHE-FLUSH 1`, answered after Dovecot's own `VERSION` and `SPID` lines by
 * `OK 1 <count>`. Starting doveadm from the service took 20–30 ms of a mailbox's apply (a fork
 * of a large process stops its event loop meanwhile); the socket answers in about 2 ms.
 * Resolves with the number of entries flushed.
 */
export function flushAuthCache(socketPath: string, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`Dovecot's auth cache flush failed: ${why}`));
    const socket = connect(socketPath);
    let input = '';
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () => {
      fail(`no answer within ${timeoutMs} ms`);
      socket.destroy();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    socket.on('data', (chunk: string) => {
      input += chunk;
      const answer = ANSWER.exec(input);
      if (!answer || !input.endsWith('\n')) return;
      socket.end();
      if (answer[1] === 'OK') resolve(Number(answer[2] ?? 0));
      else fail(`Dovecot answered ${answer[1]}`);
    });
    // A settled promise ignores this: it only speaks when Dovecot hung up without answering.
    socket.on('close', () => fail('Dovecot closed the connection without answering'));
    socket.write('VERSION\t1\t0\nCACHE-FLUSH\t1\n');
  });
}

/** What `doveadm kick` exits with when no session matched (EX_NOUSER). */
const NONE_KICKED = 68;

/**
 * Ends the IMAP and POP3 sessions of every user `mask` matches (`*@example.com`): `doveadm kick`,
 * through Dovecot's anvil. Their clients' next login is answered by what the users' entries say now.
 */
export function kickUsers(dovecotConf: string | null, mask: string, timeoutMs = 10_000): Promise<void> {
  const args = [...(dovecotConf ? ['-c', dovecotConf] : []), 'kick', mask];
  return new Promise((resolve, reject) => {
    execFile('doveadm', args, { timeout: timeoutMs }, (err, _stdout, stderr) => {
      if (!err || err.code === NONE_KICKED) return resolve();
      reject(new Error(`doveadm kick failed: ${stderr.trim().split('\n').at(-1) || err.message}`));
    });
  });
}
