import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../common/paths';

/**
 * Part of `npm run lint` and of the lint step of scripts/test.sh: fails when a comment or a document
 * names a repository path that does not exist, an anchor its Markdown file does not have, or a text
 * outside the repository. Comments and docs cite the repository by path (docs/reference/README.md),
 * and a file moved or renamed leaves its citations pointing at nothing without anything else
 * noticing: a newcomer following one finds no file. The contract is stated inside the repository
 * (docs/reference/, docs/decisions/), so a citation of the specification's documents, or of files
 * beside the checkout, sends an open-source reader to something they do not have.
 *
 * A path is a token that starts with one of the repository's top-level folders (`services/money/
 * mutation.ts`, `api/routes/`, `common/config`), perhaps followed by `:line` (not checked) or
 * `#anchor` (checked in a Markdown file: an explicit `id` or a heading's GitHub slug). It is stale
 * when nothing in the work tree has its name, with or without a module's extension. Not paths: globs and placeholders (`modules/<slug>/manifest.json`, `bench/results/*.json`),
 * URL paths and paths under another root (`/v1/...`, `dist/api/server.js`); a bench's results file
 * counts as present, since only a run writes it. Only prose counts: the
 * comments of code and configuration, the whole text of Markdown and JSON. Applied migrations and
 * recorded workflow histories are left out: they cannot change (db/migrate.ts refuses a changed
 * migration; a replay test replays a history as it was recorded).
 */

export interface PathMention { path: string; line: number; anchor?: string }

/** Citations of texts outside the repository: the specification's documents and the files beside the checkout. */
const OUTSIDE = /\b[Dd]ocument [123]\b|\bDECISIONS\.md\b|\.\.\/shared\/|\bSTYLE(?:\.md| rule \d+)|\bTOOLCHAIN\.md\b/g;

const SKIPPED = [/^node_modules\//, /^dist\//, /^sdk\/rest\/types\//, /^package-lock\.json$/, /^db\/migrations\/.*\.sql$/, /^test\/replay\/.*\.json$/];
const CODE = /\.(ts|js|cjs|mjs)$/;
const HASH_COMMENTED = /(\.(sh|yml|yaml|py)|^Dockerfile|^\.env\.example|^\.ci\/run)$/;
const WHOLE_TEXT = /\.(md|json)$/;
// Named on purpose although gone: docs/decisions/README.md maps the sections of the old single file,
// which applied migrations still cite, to where each went.
const RETIRED = new Set(['docs/decisions.md']);
// Each bench writes its run there: a results file exists once its bench has run, not in a fresh clone.
const WRITTEN_BY_RUNS = /^bench\/results\//;
// A module is often named without its extension, as in an import (`common/config` is common/config/index.ts).
const MODULE_EXTENSIONS = ['', '.ts', '.js', '.cjs', '.mjs', '.json'];

/** The text with everything outside [start, end) ranges blanked, newlines kept, so line numbers stay true. */
function keepOnly(text: string, ranges: Array<[number, number]>): string {
  const kept = text.replace(/[^\n]/g, ' ').split('');
  for (const [start, end] of ranges) for (let i = start; i < end; i += 1) kept[i] = text[i];
  return kept.join('');
}

/** The comments of TypeScript or JavaScript code, found by TypeScript's parser so strings and regular expressions are never taken for one. */
export function codeComments(text: string, fileName: string): string {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const ranges = new Map<number, number>();
  const visit = (node: ts.Node): void => {
    // Every token's leading and trailing trivia: a comment just before a closing brace belongs to that brace only.
    for (const range of [...ts.getLeadingCommentRanges(text, node.pos) ?? [], ...ts.getTrailingCommentRanges(text, node.end) ?? []]) {
      ranges.set(range.pos, range.end);
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return keepOnly(text, [...ranges]);
}

/** The line comments of a shell, YAML, SQL or protobuf file: from the marker at a line's start or after a blank to its end. */
export function lineComments(text: string, marker: '#' | '--' | '//'): string {
  const ranges: Array<[number, number]> = [];
  const comment = new RegExp(`(^|[ \\t])${marker}.*$`, 'gm');
  for (const match of text.matchAll(comment)) ranges.push([match.index, match.index + match[0].length]);
  return keepOnly(text, ranges);
}

/** The repository paths a prose text names, each with its line (1-based). */
export function pathsIn(text: string, topFolders: Iterable<string>): PathMention[] {
  const folders = [...topFolders].map((folder) => folder.replace(/[.]/g, '\\.')).join('|');
  // Not after a word, a dot, a slash or a sigil: `./api`, `/v1/api/...`, `$DIR/test/...` and `@scope/...` are not repository paths.
  const token = new RegExp(`(?<![\\w.\\/@$~-])(?:${folders})\\/[\\w.+\\-/<>{}$*]*`, 'g');
  const mentions: PathMention[] = [];
  for (const match of text.matchAll(token)) {
    // A glob or a placeholder (`<slug>`, `${dir}`, a shell usage line's NAME) names many files, or none yet.
    if (/[<>{}$*]|\bNAME\b/.test(match[0])) continue;
    if (/^[^/]+\/s$/.test(match[0])) continue; // a rate: 50 workflows/s
    const path = match[0].replace(/\.+$/, ''); // the full stop of a sentence
    const anchor = path === match[0] ? /^#([\w-]+)/.exec(text.slice(match.index + match[0].length))?.[1] : undefined;
    mentions.push({ path, line: text.slice(0, match.index).split('\n').length, ...(anchor ? { anchor } : {}) });
  }
  return mentions;
}

/** Each citation of a text outside the repository, with its line. */
export function outsideCitations(text: string): { citation: string; line: number }[] {
  return [...text.matchAll(OUTSIDE)].map((match) => ({ citation: match[0], line: text.slice(0, match.index).split('\n').length }));
}

/** The anchors a Markdown text offers: explicit ids, and each heading's slug as GitHub makes it. */
export function anchorsOf(markdown: string): Set<string> {
  const ids = [...markdown.matchAll(/\bid="([\w-]+)"/g)].map((match) => match[1]);
  const slugs = [...markdown.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)]
    .map((match) => match[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-'));
  return new Set([...ids, ...slugs]);
}

function exists(path: string): boolean {
  const name = path.replace(/\/+$/, '');
  return RETIRED.has(name) || WRITTEN_BY_RUNS.test(name) || MODULE_EXTENSIONS.some((extension) => existsSync(join(repoRoot, name + extension)));
}

function proseOf(file: string, text: string): string | null {
  if (CODE.test(file)) return codeComments(text, file);
  if (HASH_COMMENTED.test(file)) return lineComments(text, '#');
  if (file.endsWith('.sql')) return lineComments(text, '--');
  if (file.endsWith('.proto')) return lineComments(text, '//');
  if (WHOLE_TEXT.test(file)) return text;
  return null;
}

function main(): void {
  // Tracked files and new ones not yet committed (but not the ignored: node_modules/, dist/, .env).
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0').filter((file) => file && existsSync(join(repoRoot, file)) && !SKIPPED.some((skip) => skip.test(file)));
  const topFolders = new Set(files.filter((file) => file.includes('/')).map((file) => file.slice(0, file.indexOf('/'))));
  const stale: string[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (path: string) => anchors.get(path) ?? anchors.set(path, anchorsOf(readFileSync(join(repoRoot, path), 'utf8'))).get(path)!;
  for (const file of files) {
    const prose = proseOf(file, readFileSync(join(repoRoot, file), 'utf8'));
    if (prose === null) continue;
    for (const { path, line, anchor } of pathsIn(prose, topFolders)) {
      if (!exists(path)) stale.push(`${file}:${line}: ${path}`);
      else if (anchor && path.endsWith('.md') && existsSync(join(repoRoot, path)) && !anchorsIn(path).has(anchor)) stale.push(`${file}:${line}: ${path}#${anchor} (no such anchor)`);
    }
    for (const { citation, line } of outsideCitations(prose)) stale.push(`${file}:${line}: ${citation} (outside the repository)`);
  }
  if (stale.length > 0) {
    process.stderr.write(`${stale.length} citation(s) in comments or documents name nothing in the repository:\n${stale.join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`check-paths: every path and anchor named in ${files.length} files exists, and none cites a text outside the repository\n`);
}

if (require.main === module) main();
