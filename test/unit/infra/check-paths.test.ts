import { anchorsOf, codeComments, lineComments, outsideCitations, pathsIn } from '../../../scripts/check-paths';

// What scripts/check-paths.ts (part of `npm run lint`) takes for a repository path in prose, and
// which text of a file counts as prose.
const folders = ['api', 'services', 'db', 'bench', '.ci'];
const paths = (text: string) => pathsIn(text, folders).map(({ path }) => path);

describe('pathsIn', () => {
  it.each([
    ['a file with a line', 'see services/money/mutation.ts:26 for why', ['services/money/mutation.ts']],
    ['a file with an anchor', 'rules in `db/queries.md#rule-3`.', ['db/queries.md']],
    ['a folder with its slash', 'The flows live in api/identity/.', ['api/identity/']],
    ['a module without extension', 'see db/queries/money', ['db/queries/money']],
    ['the full stop of a sentence', 'It lives in db/pool.ts.', ['db/pool.ts']],
    ['a dotted top-level folder', 'CI runs .ci/run', ['.ci/run']],
    ['a patch file', 'bench/kafkajs+2.2.4.patch', ['bench/kafkajs+2.2.4.patch']],
  ])('finds %s', (_case, text, expected) => {
    expect(paths(text)).toEqual(expected);
  });

  it.each([
    ['a glob', 'each run writes bench/results/*.json'],
    ['a placeholder', 'api/routes/<domain>/<resource>.routes.ts, services/{tenantId}/x, db/${name}.ts'],
    ['a shell usage line\'s NAME', 'each services/NAME.sh defines NAME_start'],
    ['a URL path', 'GET /v1/api/users and https://example.com/db/x'],
    ['a relative or nested path', './api/x.ts, dist/api/server.js, node_modules/@x/db/y'],
    ['a rate', '50 services/s at p99'],
    ['a word that only ends like a folder', 'myapi/x and sub-db/y'],
  ])('ignores %s', (_case, text) => {
    expect(paths(text)).toEqual([]);
  });

  it('gives each path its line', () => {
    expect(pathsIn('one\ntwo api/a.ts\n\nfour db/b.ts', folders)).toEqual([
      { path: 'api/a.ts', line: 2 },
      { path: 'db/b.ts', line: 4 },
    ]);
  });
});

describe('codeComments', () => {
  const code = [
    "import { x } from 'api/imported';",
    'const re = /db\\/not-a-comment\\/*/;',
    'const url = `http://host/api/${x}`; // api/trailing.ts',
    'function f(): void {',
    '  /* db/block.ts */',
    '  // api/before-brace.ts',
    '}',
  ].join('\n');

  it('keeps the comments, where they were, and blanks strings, imports and regular expressions', () => {
    expect(paths(codeComments(code, 'x.ts'))).toEqual(['api/trailing.ts', 'db/block.ts', 'api/before-brace.ts']);
    expect(pathsIn(codeComments(code, 'x.ts'), folders).map(({ line }) => line)).toEqual([3, 5, 6]);
  });
});

describe('lineComments', () => {
  it('keeps shell comments, not a # inside a word or an expansion', () => {
    const shell = 'echo "${#list[@]}" api/not.sh # see api/yes.sh\n# db/also.sh\nurl=http://x/#db/no';
    expect(paths(lineComments(shell, '#'))).toEqual(['api/yes.sh', 'db/also.sh']);
  });

  it('keeps SQL comments', () => {
    expect(paths(lineComments("SELECT 'db/no.sql' -- db/yes.ts\n", '--'))).toEqual(['db/yes.ts']);
  });
});

describe('anchors and outside citations', () => {
  it('finds the anchor a path is cited with', () => {
    expect(pathsIn('see docs/reference/money.md#rule-3, and api/x.ts:12', ['docs', 'api'])).toEqual([
      { path: 'docs/reference/money.md', line: 1, anchor: 'rule-3' },
      { path: 'api/x.ts', line: 1 },
    ]);
  });

  it('offers explicit ids and the headings\' GitHub slugs as anchors', () => {
    const anchors = anchorsOf('# Money\n\n## Rules\n\n<a id="rule-3"></a>\n### Rule 3: A transfer never overdraws\n\n## Limits & errors\n');
    expect([...anchors].sort()).toEqual(['limits--errors', 'money', 'rule-3', 'rule-3-a-transfer-never-overdraws', 'rules'].sort());
  });

  it('finds citations of texts outside the repository', () => {
    const text = 'as document 2 says\nDECISIONS.md, Money; ../shared/seeds/x\nSTYLE rule 7 and TOOLCHAIN.md\na documented rule, documents 2';
    expect(outsideCitations(text).map(({ citation, line }) => `${line}: ${citation}`))
      .toEqual(['1: document 2', '2: DECISIONS.md', '2: ../shared/', '3: STYLE rule 7', '3: TOOLCHAIN.md']);
  });
});
