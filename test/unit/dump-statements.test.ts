import { expect, it } from 'vitest';
import { DumpStatements } from '../../src/provisioning/drivers/dump-statements.js';

/** The statements of `text`, given in pieces of `size` bytes (all at once by default). */
function split(text: string | Buffer, size = Number.POSITIVE_INFINITY, o?: { maxBytes: number }): string[] {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  const s = new DumpStatements(o);
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += Math.min(size, bytes.length)) out.push(...s.push(bytes.subarray(i, i + size)));
  out.push(...s.end());
  return out.map((t) => t.trim());
}

/** What `mariadb-dump --routines --triggers --events --hex-blob` writes (MariaDB 10.11), shortened, with what a tenant's data may hold. */
const DUMP = `/*M!999999\\- enable the sandbox mode */ 
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
/*!40101 SET NAMES utf8mb4 */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;

--
-- Table structure for table \`odd;name\`
--

DROP TABLE IF EXISTS \`odd;name\`;
CREATE TABLE \`odd;name\` (
  \`id\` int(11) NOT NULL COMMENT 'the key; \\'quoted\\'',
  \`a\`\`b\` text DEFAULT NULL
) ENGINE=InnoDB;

LOCK TABLES \`odd;name\` WRITE;
INSERT INTO \`odd;name\` VALUES
(1,'semi;colon -- not a comment # nor this /* nor this */'),
(2,'it''s \\\\'),
(3,'back\\\\slash\\\\'),
(4,"double \\" ; quoted"),
(5,0x3B27),
(6,'line\\nbreak');
UNLOCK TABLES;
/*!50003 SET @saved_sql_mode       = @@sql_mode */ ;
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=\`root\`@\`localhost\`*/ /*!50003 TRIGGER upper BEFORE INSERT ON \`odd;name\` FOR EACH ROW SET NEW.id = NEW.id + 1 */;;
DELIMITER ;
/*!50003 SET sql_mode              = @saved_sql_mode */ ;
DELIMITER ;;
CREATE DEFINER=\`root\`@\`localhost\` PROCEDURE \`tally\`()
BEGIN
  SELECT 'a;b';
  SELECT 1; -- a comment; inside
END ;;
DELIMITER ;
SELECT 2--1;
# a closing comment;
/* and a last one; */
-- Dump completed on 2026-12-05 13:54:21
`;

const STATEMENTS = [
  `/*M!999999\\- enable the sandbox mode */ 
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
/*!40101 SET NAMES utf8mb4 */`,
  '/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */',
  `--
-- Table structure for table \`odd;name\`
--

DROP TABLE IF EXISTS \`odd;name\``,
  `CREATE TABLE \`odd;name\` (
  \`id\` int(11) NOT NULL COMMENT 'the key; \\'quoted\\'',
  \`a\`\`b\` text DEFAULT NULL
) ENGINE=InnoDB`,
  'LOCK TABLES `odd;name` WRITE',
  `INSERT INTO \`odd;name\` VALUES
(1,'semi;colon -- not a comment # nor this /* nor this */'),
(2,'it''s \\\\'),
(3,'back\\\\slash\\\\'),
(4,"double \\" ; quoted"),
(5,0x3B27),
(6,'line\\nbreak')`,
  'UNLOCK TABLES',
  '/*!50003 SET @saved_sql_mode       = @@sql_mode */',
  '/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER upper BEFORE INSERT ON `odd;name` FOR EACH ROW SET NEW.id = NEW.id + 1 */',
  '/*!50003 SET sql_mode              = @saved_sql_mode */',
  `CREATE DEFINER=\`root\`@\`localhost\` PROCEDURE \`tally\`()
BEGIN
  SELECT 'a;b';
  SELECT 1; -- a comment; inside
END`,
  'SELECT 2--1',
];

it('splits a dump where the mariadb client does: quotes, comments, executable comments and DELIMITER lines', () => {
  expect(split(DUMP)).toEqual(STATEMENTS);
});

it('splits a dump the same whatever pieces it arrives in', () => {
  for (const size of [1, 2, 3, 5, 7, 64]) expect(split(DUMP, size), `pieces of ${size}`).toEqual(STATEMENTS);
  // Every place one cut can fall.
  const bytes = Buffer.from(DUMP, 'latin1');
  for (let cut = 1; cut < bytes.length; cut++) {
    const s = new DumpStatements();
    const out = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut)), ...s.end()];
    expect(
      out.map((t) => t.trim()),
      `cut at ${cut}`,
    ).toEqual(STATEMENTS);
  }
});

it('keeps every byte of a statement as it was, UTF-8 or not', () => {
  const bytes = Buffer.concat([
    Buffer.from("INSERT INTO t VALUES ('café ", 'utf8'),
    Buffer.from([0xff, 0x00, 0x80]),
    Buffer.from("');"),
  ]);
  const [statement] = split(bytes);
  expect(Buffer.from(statement as string, 'latin1')).toEqual(bytes.subarray(0, bytes.length - 1));
});

it('sends no statement of spaces and comments alone, and the last one without its delimiter', () => {
  expect(split(';; ;\n-- nothing\n;/* nor here */;\nSELECT 1;\n;SELECT 2')).toEqual(['SELECT 1', 'SELECT 2']);
  expect(split('DELIMITER $$\nSELECT 1$$\nSELECT 2;SELECT 3$$')).toEqual(['SELECT 1', 'SELECT 2;SELECT 3']);
  // A statement that only starts with the word is no command.
  expect(split('delimiters_table;\nDELIMITER\tx\nSELECT 1x')).toEqual(['delimiters_table', 'SELECT 1']);
});

it('refuses a statement larger than the server would take', () => {
  expect(() => split(`INSERT INTO t VALUES ('${'x'.repeat(100)}');`, 10, { maxBytes: 64 })).toThrow(
    /a statement of the dump exceeds 64 bytes/,
  );
  expect(split(`INSERT INTO t VALUES ('${'x'.repeat(30)}');`, 10, { maxBytes: 64 })).toHaveLength(1);
});
