import type { BUILTIN_EVAL_CATEGORIES } from '../../protocol/eval';

/**
 * The built-in corpus as data (pure): per category, a small program as its fix left it, the bug
 * that fix removed, and a harmless change of similar size for the clean twin. builtin.ts turns
 * each into a real repository (the program with the bug, then the fix) and computes the truth
 * from git exactly as for history cases; nothing here says which lines are the truth.
 */

export type BuiltinEvalCategory = (typeof BUILTIN_EVAL_CATEGORIES)[number];

/** An exact text replacement in one file: `from` must occur exactly once. */
export interface ProgramEdit {
  path: string;
  from: string;
  to: string;
}

export interface BuiltinCaseSpec {
  category: BuiltinEvalCategory;
  language: 'typescript' | 'javascript' | 'python';
  /** The program as the fix left it (correct): repository path → content. */
  files: Readonly<Record<string, string>>;
  /** The bug: before the fix, `to` stood where the program now has `from`. */
  bug: ProgramEdit;
  /** The first commit's message (it brought the program in, with the bug). */
  introducedBy: string;
  /** The fix commit's message. */
  fixMessage: string;
  /** The clean twin: a harmless change on top of the fix (a rename, a comment, a message). */
  twin: readonly ProgramEdit[];
  /** What the twin changes, in words (the case note). */
  twinNote: string;
}

/** Applies edits to a file map; throws when an edit's `from` is not there exactly once (a data error). */
export function applyEdits(files: Readonly<Record<string, string>>, edits: readonly ProgramEdit[]): Record<string, string> {
  const result: Record<string, string> = { ...files };
  for (const edit of edits) {
    const text = result[edit.path];
    if (text === undefined) throw new Error(`built-in case edit names ${edit.path}, which the program does not have`);
    const at = text.indexOf(edit.from);
    if (at < 0 || text.indexOf(edit.from, at + 1) >= 0 || edit.from.length === 0) {
      throw new Error(`built-in case edit of ${edit.path} must match exactly once: ${JSON.stringify(edit.from.slice(0, 60))}`);
    }
    result[edit.path] = text.slice(0, at) + edit.to + text.slice(at + edit.from.length);
  }
  return result;
}

/** The program before its fix (with the bug). */
export function buggyProgram(spec: BuiltinCaseSpec): Record<string, string> {
  return applyEdits(spec.files, [{ path: spec.bug.path, from: spec.bug.from, to: spec.bug.to }]);
}

/** The program after the clean twin's harmless change. */
export function twinProgram(spec: BuiltinCaseSpec): Record<string, string> {
  return applyEdits(spec.files, spec.twin);
}

function nodePackage(name: string, description: string, typescript: boolean): string {
  const manifest = typescript
    ? { name, version: '1.0.0', private: true, description, main: 'dist/index.js', scripts: { build: 'tsc -p .' }, devDependencies: { '@types/node': '^20.0.0', typescript: '^5.4.0' } }
    : { name, version: '1.0.0', private: true, description, main: 'src/index.js' };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "commonjs",
    "strict": true,
    "outDir": "dist",
    "rootDir": "src"
  },
  "include": ["src"]
}
`;

function pythonProject(name: string, description: string): string {
  return `[project]\nname = "${name}"\nversion = "1.0.0"\ndescription = "${description}"\nrequires-python = ">=3.9"\n`;
}

// ── off-by-one ──────────────────────────────────────────────────────────────────────────────────

const PAGINATE_TS = `export interface Page<T> {
  items: T[];
  /** The 1-based page actually served (clamped to the pages there are). */
  page: number;
  pageCount: number;
}

/** One page of \`items\`, \`size\` items per page; \`page\` is 1-based and clamped. */
export function paginate<T>(items: readonly T[], page: number, size: number): Page<T> {
  if (!Number.isInteger(size) || size <= 0) {
    throw new RangeError('page size must be a positive integer');
  }
  const pageCount = Math.max(1, Math.ceil(items.length / size));
  const current = Math.min(Math.max(1, Math.trunc(page)), pageCount);
  const start = (current - 1) * size;
  return { items: items.slice(start, start + size), page: current, pageCount };
}
`;

const ARTICLES_TS = `import { paginate } from './paginate';

export interface Article {
  id: number;
  title: string;
  publishedAt: string;
}

export const PAGE_SIZE = 20;

/** GET /articles?page=N, newest first. */
export function listArticles(all: readonly Article[], query: URLSearchParams) {
  const newestFirst = [...all].sort((a, b) => b.publishedAt.localeCompare(a.publishedAt));
  const requested = Number(query.get('page') ?? '1');
  const page = paginate(newestFirst, Number.isFinite(requested) ? requested : 1, PAGE_SIZE);
  return {
    articles: page.items.map(({ id, title }) => ({ id, title })),
    page: page.page,
    pages: page.pageCount,
  };
}
`;

// ── missing-await ───────────────────────────────────────────────────────────────────────────────

const LEDGER_TS = `export interface Transaction {
  balance(account: string): Promise<number>;
  debit(account: string, amount: number): Promise<void>;
  credit(account: string, amount: number): Promise<void>;
}

export interface Ledger {
  /** Runs \`work\` in one database transaction: committed when it resolves, rolled back when it rejects. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
}

export class InsufficientFunds extends Error {
  constructor(
    readonly account: string,
    readonly requested: number,
    readonly available: number,
  ) {
    super(\`account \${account} has \${available}, \${requested} requested\`);
    this.name = 'InsufficientFunds';
  }
}
`;

const TRANSFER_TS = `import { InsufficientFunds, type Ledger } from './ledger';

/** Moves \`amount\` from one account to another, all or nothing. */
export async function transfer(ledger: Ledger, from: string, to: string, amount: number): Promise<void> {
  if (!(amount > 0)) throw new RangeError('amount must be positive');
  if (from === to) return;
  await ledger.transaction(async (tx) => {
    const available = await tx.balance(from);
    if (available < amount) throw new InsufficientFunds(from, amount, available);
    await tx.debit(from, amount);
    await tx.credit(to, amount);
  });
}
`;

// ── sql-injection ───────────────────────────────────────────────────────────────────────────────

const USERS_PY = `"""User lookups for the account pages."""

import sqlite3
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class User:
    id: int
    name: str
    email: str


def find_by_email(conn: sqlite3.Connection, email: str) -> Optional[User]:
    """Return the user with this e-mail address, or None."""
    row = conn.execute(
        "SELECT id, name, email FROM users WHERE lower(email) = lower(?)",
        (email.strip(),),
    ).fetchone()
    return User(*row) if row else None


def rename(conn: sqlite3.Connection, user_id: int, name: str) -> None:
    with conn:
        conn.execute("UPDATE users SET name = ? WHERE id = ?", (name, user_id))
`;

const ACCOUNT_PY = `"""The account page's handlers."""

import sqlite3

from app.users import find_by_email


def lookup(conn: sqlite3.Connection, params: dict) -> dict:
    user = find_by_email(conn, params.get("email", ""))
    if user is None:
        return {"status": 404, "body": {"error": "no such user"}}
    return {"status": 200, "body": {"id": user.id, "name": user.name}}
`;

// ── swapped-argument ────────────────────────────────────────────────────────────────────────────

const BACKUP_TS = `import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** A sortable UTC timestamp for backup names: 20240301T101500Z. */
export function stamp(at: Date = new Date()): string {
  return at.toISOString().replace(/[-:]/g, '').replace(/\\.\\d{3}/, '');
}

/** Copies \`source\` into \`backupDir\` under a timestamped name and returns the copy's path. */
export async function backup(source: string, backupDir: string, at: Date = new Date()): Promise<string> {
  await mkdir(backupDir, { recursive: true });
  const target = join(backupDir, \`\${basename(source)}.\${stamp(at)}.bak\`);
  await copyFile(source, target);
  return target;
}

/** Keeps the newest \`keep\` backups of \`name\` in \`backupDir\` and deletes the rest. */
export async function prune(backupDir: string, name: string, keep: number): Promise<string[]> {
  const copies = (await readdir(backupDir)).filter((file) => file.startsWith(\`\${name}.\`) && file.endsWith('.bak')).sort();
  const doomed = copies.slice(0, Math.max(0, copies.length - keep));
  for (const file of doomed) await rm(join(backupDir, file));
  return doomed;
}
`;

const BACKUP_CLI_TS = `import { backup, prune } from './backup';

/** nightly-backup FILE DIR [KEEP] */
export async function main(argv: readonly string[]): Promise<number> {
  const [file, dir, keepText = '7'] = argv;
  if (!file || !dir) {
    process.stderr.write('usage: nightly-backup FILE DIR [KEEP]\\n');
    return 2;
  }
  const copy = await backup(file, dir);
  const removed = await prune(dir, copy.split('/').pop()!.split('.')[0]!, Number(keepText));
  process.stdout.write(\`backed up to \${copy}; removed \${removed.length} old copies\\n\`);
  return 0;
}
`;

// ── missing-null-check ──────────────────────────────────────────────────────────────────────────

const DISPLAY_NAME_JS = `'use strict';

/**
 * @typedef {{ nickname?: string, firstName: string, lastName: string }} Profile
 * @typedef {{ id: string, email: string, profile: Profile | null }} User
 */

/**
 * The name shown next to a comment: the nickname, else the full name.
 * @param {User} user
 * @returns {string}
 */
function displayName(user) {
  if (user.profile == null) return user.email; // invited accounts have no profile yet
  const { nickname, firstName, lastName } = user.profile;
  return nickname || \`\${firstName} \${lastName}\`.trim();
}

/**
 * @param {User[]} users
 * @returns {Map<string, string>} user id → display name
 */
function displayNames(users) {
  return new Map(users.map((user) => [user.id, displayName(user)]));
}

module.exports = { displayName, displayNames };
`;

const COMMENTS_JS = `'use strict';

const { displayNames } = require('./users');

/**
 * The comment thread as the page renders it.
 * @param {{ id: string, authorId: string, body: string }[]} comments
 * @param {import('./users').User[]} authors
 */
function renderThread(comments, authors) {
  const names = displayNames(authors);
  return comments.map((comment) => ({
    id: comment.id,
    author: names.get(comment.authorId) ?? 'deleted user',
    body: comment.body,
  }));
}

module.exports = { renderThread };
`;

// ── unclosed-handle ─────────────────────────────────────────────────────────────────────────────

const LOGSTATS_PY = `"""Counts log lines by level for the nightly report."""

import collections
import sys
from pathlib import Path

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def count_levels(path: Path) -> collections.Counter:
    """Count the lines of one log file by level (the third field)."""
    counts: collections.Counter = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            fields = line.split(maxsplit=3)
            if len(fields) >= 3 and fields[2] in LEVELS:
                counts[fields[2]] += 1
    return counts


def main(argv: list) -> int:
    total: collections.Counter = collections.Counter()
    for name in sorted(Path(argv[1]).glob("*.log")):
        total += count_levels(name)
    for level in LEVELS:
        print(f"{level:<8} {total[level]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
`;

// ── wrong-lock ──────────────────────────────────────────────────────────────────────────────────

const MUTEX_TS = `/** A promise-based mutual exclusion lock: acquire() resolves to the function that releases it. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return ready;
  }
}

/** One mutex per key, made on first use. */
export class KeyedMutex {
  private readonly locks = new Map<string, Mutex>();

  for(key: string): Mutex {
    let lock = this.locks.get(key);
    if (!lock) {
      lock = new Mutex();
      this.locks.set(key, lock);
    }
    return lock;
  }
}
`;

const INVENTORY_TS = `import { KeyedMutex } from './mutex';

export interface StockStore {
  available(sku: string): Promise<number>;
  setAvailable(sku: string, count: number): Promise<void>;
}

export interface OrderLine {
  orderId: string;
  sku: string;
  quantity: number;
}

/** Reserves stock for order lines; each reservation reads a count and writes it back. */
export class Inventory {
  private readonly locks = new KeyedMutex();

  constructor(private readonly store: StockStore) {}

  async reserve(line: OrderLine): Promise<boolean> {
    const release = await this.locks.for(line.sku).acquire();
    try {
      const available = await this.store.available(line.sku);
      if (available < line.quantity) return false;
      await this.store.setAvailable(line.sku, available - line.quantity);
      return true;
    } finally {
      release();
    }
  }
}
`;

// ── The cases ───────────────────────────────────────────────────────────────────────────────────

export const BUILTIN_CASE_SPECS: readonly BuiltinCaseSpec[] = [
  {
    category: 'off-by-one',
    language: 'typescript',
    files: {
      'README.md': '# articles\n\nThe article listing API: newest first, twenty per page.\n',
      'package.json': nodePackage('articles', 'Article listing API', true),
      'tsconfig.json': TSCONFIG,
      'src/articles.ts': ARTICLES_TS,
      'src/paginate.ts': PAGINATE_TS,
    },
    bug: { path: 'src/paginate.ts', from: '  const start = (current - 1) * size;\n', to: '  const start = current * size;\n' },
    introducedBy: 'Add the paginated article listing',
    fixMessage: 'fix(paginate): the first page was never served (pages are 1-based)',
    twin: [
      {
        path: 'src/paginate.ts',
        from: "    throw new RangeError('page size must be a positive integer');\n",
        to: '    throw new RangeError(`page size must be a positive integer, got ${size}`);\n',
      },
    ],
    twinNote: 'the page-size error message names the size it got',
  },
  {
    category: 'missing-await',
    language: 'typescript',
    files: {
      'README.md': '# ledger\n\nTransfers between accounts, each in one database transaction.\n',
      'package.json': nodePackage('ledger', 'Account transfers', true),
      'tsconfig.json': TSCONFIG,
      'src/ledger.ts': LEDGER_TS,
      'src/transfer.ts': TRANSFER_TS,
    },
    bug: { path: 'src/transfer.ts', from: '    await tx.credit(to, amount);\n', to: '    tx.credit(to, amount);\n' },
    introducedBy: 'Add transfers between accounts',
    fixMessage: 'fix: await the credit inside the transfer transaction',
    twin: [
      {
        path: 'src/transfer.ts',
        from: '    await tx.debit(from, amount);\n',
        to: '    // Debit before credit, so a failed credit rolls the debit back with the rest.\n    await tx.debit(from, amount);\n',
      },
    ],
    twinNote: 'a comment on why the debit comes first',
  },
  {
    category: 'sql-injection',
    language: 'python',
    files: {
      'README.md': '# accounts\n\nThe account pages: look a user up by e-mail, rename them.\n',
      'pyproject.toml': pythonProject('accounts', 'Account pages'),
      'app/__init__.py': '',
      'app/account.py': ACCOUNT_PY,
      'app/users.py': USERS_PY,
    },
    bug: {
      path: 'app/users.py',
      from: '        "SELECT id, name, email FROM users WHERE lower(email) = lower(?)",\n        (email.strip(),),\n',
      to: '        f"SELECT id, name, email FROM users WHERE lower(email) = lower(\'{email.strip()}\')"\n',
    },
    introducedBy: 'Add user lookups by e-mail',
    fixMessage: 'fix(users): bind the e-mail as a query parameter instead of formatting it into the SQL',
    twin: [
      {
        path: 'app/users.py',
        from: '    """Return the user with this e-mail address, or None."""\n',
        to: '    """Look a user up by e-mail address, ignoring case; None when there is none."""\n',
      },
    ],
    twinNote: 'a reworded docstring',
  },
  {
    category: 'swapped-argument',
    language: 'typescript',
    files: {
      'README.md': '# nightly-backup\n\nCopies a file into a backup folder under a timestamped name and keeps the newest copies.\n',
      'package.json': nodePackage('nightly-backup', 'Timestamped file backups', true),
      'tsconfig.json': TSCONFIG,
      'src/backup.ts': BACKUP_TS,
      'src/cli.ts': BACKUP_CLI_TS,
    },
    bug: { path: 'src/backup.ts', from: '  await copyFile(source, target);\n', to: '  await copyFile(target, source);\n' },
    introducedBy: 'Add timestamped backups with pruning',
    fixMessage: 'fix(backup): copy from the source to the backup, not the other way round',
    twin: [
      {
        path: 'src/backup.ts',
        from: '  const doomed = copies.slice(0, Math.max(0, copies.length - keep));\n  for (const file of doomed) await rm(join(backupDir, file));\n  return doomed;\n',
        to: '  const expired = copies.slice(0, Math.max(0, copies.length - keep));\n  for (const file of expired) await rm(join(backupDir, file));\n  return expired;\n',
      },
    ],
    twinNote: 'a local variable renamed',
  },
  {
    category: 'missing-null-check',
    language: 'javascript',
    files: {
      'README.md': "# comments\n\nRenders comment threads with their authors' display names.\n",
      'package.json': nodePackage('comments', 'Comment threads', false),
      'src/comments.js': COMMENTS_JS,
      'src/users.js': DISPLAY_NAME_JS,
    },
    bug: { path: 'src/users.js', from: '  if (user.profile == null) return user.email; // invited accounts have no profile yet\n', to: '' },
    introducedBy: 'Add display names for comment authors',
    fixMessage: 'fix: fall back to the e-mail address for users without a profile',
    twin: [
      {
        path: 'src/users.js',
        from: ' * @returns {Map<string, string>} user id → display name\n',
        to: ' * @returns {Map<string, string>} user id → display name, in the order of `users`\n',
      },
    ],
    twinNote: 'a clarified JSDoc line',
  },
  {
    category: 'unclosed-handle',
    language: 'python',
    files: {
      'README.md': '# logstats\n\nCounts the lines of every log file in a folder by level, for the nightly report.\n',
      'pyproject.toml': pythonProject('logstats', 'Log level counts'),
      'tools/logstats.py': LOGSTATS_PY,
    },
    bug: {
      path: 'tools/logstats.py',
      from: '    with open(path, encoding="utf-8", errors="replace") as log:\n        for line in log:\n            fields = line.split(maxsplit=3)\n            if len(fields) >= 3 and fields[2] in LEVELS:\n                counts[fields[2]] += 1\n',
      to: '    log = open(path, encoding="utf-8", errors="replace")\n    for line in log:\n        fields = line.split(maxsplit=3)\n        if len(fields) >= 3 and fields[2] in LEVELS:\n            counts[fields[2]] += 1\n',
    },
    introducedBy: 'Add nightly log level counts',
    fixMessage: 'fix(logstats): close each log file after counting it',
    twin: [
      {
        path: 'tools/logstats.py',
        from: '    total: collections.Counter = collections.Counter()\n    for name in sorted(Path(argv[1]).glob("*.log")):\n        total += count_levels(name)\n    for level in LEVELS:\n        print(f"{level:<8} {total[level]}")\n',
        to: '    totals: collections.Counter = collections.Counter()\n    for name in sorted(Path(argv[1]).glob("*.log")):\n        totals += count_levels(name)\n    for level in LEVELS:\n        print(f"{level:<8} {totals[level]}")\n',
      },
    ],
    twinNote: 'a local variable renamed',
  },
  {
    category: 'wrong-lock',
    language: 'typescript',
    files: {
      'README.md': '# inventory\n\nStock reservations for order lines, one lock per SKU.\n',
      'package.json': nodePackage('inventory', 'Stock reservations', true),
      'tsconfig.json': TSCONFIG,
      'src/inventory.ts': INVENTORY_TS,
      'src/mutex.ts': MUTEX_TS,
    },
    bug: { path: 'src/inventory.ts', from: '    const release = await this.locks.for(line.sku).acquire();\n', to: '    const release = await this.locks.for(line.orderId).acquire();\n' },
    introducedBy: 'Add stock reservation with locking',
    fixMessage: 'fix(inventory): lock the SKU, not the order, while reserving stock',
    twin: [
      {
        path: 'src/inventory.ts',
        from: '/** Reserves stock for order lines; each reservation reads a count and writes it back. */\n',
        to: '/** Reserves stock for order lines; each reservation reads a count and writes it back, under its lock. */\n',
      },
    ],
    twinNote: 'a clarified doc comment',
  },
];
