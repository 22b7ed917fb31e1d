import { expect, it } from 'vitest';
import { definersOf, refusedDefiner } from '../../src/provisioning/drivers/dump-definers.js';

const ok = (statement: string) => refusedDefiner(statement, 'alice_shop', '%');

it('reads the definers of what mariadb-dump writes: triggers, views, routines and events', () => {
  const dumped = [
    "/*!50003 CREATE*/ /*!50017 DEFINER=`alice_app`@`%`*/ /*!50003 TRIGGER stamp BEFORE INSERT ON `t` FOR EACH ROW SET NEW.n = 'x;*/' */",
    '/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50013 DEFINER=`alice_app`@`%` SQL SECURITY DEFINER */\n/*!50001 VIEW `v` AS select 1 AS `n` */',
    'CREATE DEFINER=`alice_ro`@`%` PROCEDURE `tally`(OUT c INT)\nBEGIN SELECT COUNT(*) INTO c FROM `t`; END',
    "/*!50106 CREATE*/ /*!50117 DEFINER=`alice_app`@`%`*/ /*!50106 EVENT `tick` ON SCHEDULE EVERY 1 DAY DO UPDATE t SET n = 'tick' */",
  ];
  expect(definersOf(dumped[2] as string)).toEqual([{ user: 'alice_ro', host: '%' }]);
  expect(definersOf("CREATE DEFINER = 'alice_app' @ '%' VIEW v AS SELECT 1")).toEqual([{ user: 'alice_app', host: '%' }]);
  expect(definersOf('CREATE DEFINER=alice_app@localhost VIEW v AS SELECT 1')).toEqual([{ user: 'alice_app', host: 'localhost' }]);
  for (const statement of dumped.slice(1)) expect(ok(statement), statement).toBeNull();
  // The trigger's body holds `*/` in a string inside an executable comment: not read as the server
  // would read a skipped one, so refused, though mariadb-dump wrote it.
  expect(ok(dumped[0] as string)).toMatch(/end of an executable comment/);
  expect(ok(dumped[0]!.replace("'x;*/'", "'x;'"))).toBeNull();
});

it('refuses a definer that is not a user of the account, at its host', () => {
  expect(ok('CREATE DEFINER=`root`@`localhost` PROCEDURE p() SELECT 1')).toMatch(
    /"root@localhost", not a user of the account \(alice_…@%\)/,
  );
  expect(ok('CREATE DEFINER=`alice_app`@`localhost` PROCEDURE p() SELECT 1')).toMatch(/alice_app@localhost/);
  expect(ok('CREATE DEFINER=`bob_app`@`%` PROCEDURE p() SELECT 1')).toMatch(/bob_app@%/);
  // `alice` alone is not of the account's prefix (`alice_`), nor a role, nor CURRENT_USER (the load's own user).
  expect(ok("CREATE DEFINER='alice'@'%' VIEW v AS SELECT 1")).toMatch(/"alice@%"/);
  expect(ok('CREATE DEFINER=alice_role VIEW v AS SELECT 1')).toMatch(/"alice_role"/);
  expect(ok('CREATE DEFINER=CURRENT_USER() PROCEDURE p() SELECT 1')).toMatch(/"CURRENT_USER"/);
  expect(ok('CREATE DEFINER=@x PROCEDURE p() SELECT 1')).toMatch(/not of the form user@host/);
  // A database without the prefix (`<username>_`) allows no definer at all.
  expect(refusedDefiner('CREATE DEFINER=`a`@`%` VIEW v AS SELECT 1', 'plain', '%')).toMatch(/not a user/);
  // Every clause counts, the second as much as the first.
  expect(ok('ALTER DEFINER=`alice_app`@`%` EVENT e DEFINER=`root`@`%`')).toMatch(/root@%/);
});

it('finds a definer however it is written, wherever the server reads it', () => {
  for (const hidden of [
    'create definer=root@localhost procedure p() select 1',
    'CREATE DEFINER/* a comment */=/**/`root`@`localhost` PROCEDURE p() SELECT 1',
    'CREATE\nDEFINER\n=\n"root"@"localhost" PROCEDURE p() SELECT 1',
    'CREATE /*!50017 DEFINER=`root`@`localhost`*/ PROCEDURE p() SELECT 1',
    'CREATE /*M!100100 DEFINER=`root`@`localhost`*/ PROCEDURE p() SELECT 1',
    'CREATE DEFINER=`ro``ot`@`%` PROCEDURE p() SELECT 1',
    "CREATE DEFINER='alice_app\\'@'%' PROCEDURE p() SELECT 1",
  ])
    expect(ok(hidden), hidden).not.toBeNull();
  // A server skips an executable comment above its version up to its first `*/`: a quote or a
  // comment that would hide the rest from this reading is refused.
  expect(ok("CREATE /*!99999 'a */ DEFINER=`root`@`localhost` PROCEDURE p() SELECT 1 /* ' */")).toMatch(/executable comment/);
  expect(ok('CREATE /*!99999 # */ DEFINER=`root`@`localhost` PROCEDURE p() SELECT 1\n')).toMatch(/executable comment/);
  expect(ok('CREATE /*!99999 -- */ DEFINER=`root`@`localhost` PROCEDURE p() SELECT 1\n')).toMatch(/executable comment/);
  expect(ok('CREATE /*!50001 /*!50002 DEFINER=`root`@`%` */ */ VIEW v AS SELECT 1')).toMatch(/inside another/);
  expect(ok("CREATE PROCEDURE p() SELECT 'unclosed")).toMatch(/not closed/);
});

it('leaves alone what only looks like a definer: in strings, quoted names and comments, or without `=`', () => {
  for (const statement of [
    "INSERT INTO t VALUES ('DEFINER=root@localhost')",
    'CREATE TABLE t (`definer` TEXT)',
    'SELECT definer FROM information_schema.ROUTINES',
    '/* DEFINER=root@localhost */ CREATE TABLE t (a INT)',
    '-- DEFINER=root@localhost\nCREATE TABLE t (a INT)',
    '# DEFINER=root@localhost\nCREATE TABLE t (a INT)',
    'SELECT "DEFINER=root@localhost \\" DEFINER=root"',
  ])
    expect(ok(statement), statement).toBeNull();
});
