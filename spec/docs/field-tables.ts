/** A row of a doc's field table: `| \`name?\` | \`type\` | meaning |`. */
export interface DocField {
  name: string;
  optional: boolean;
  type: string;
  meaning: string;
  line: number;
}

/** One `##`/`###` section of a markdown doc. */
export interface DocSection {
  heading: string;
  /** GitHub's anchor for the heading (`#tool-call-fields`). */
  anchor: string;
  line: number;
  /** The rows of the field table(s) in the section (tables whose first header cell is `field`). */
  fields: DocField[];
  /** The anchors the section's "Fields:" line links to (the shared fields it includes). */
  includes: string[];
  /** Every inline code span of the section's prose. */
  codeSpans: string[];
}

/** GitHub's heading anchor: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Splits a table row on unescaped `|`, then turns `\|` back into `|`. */
function cells(row: string): string[] {
  const inner = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function unquote(cell: string): string | undefined {
  const m = /^`([^`]+)`$/.exec(cell);
  return m ? m[1] : undefined;
}

/** Reads the `##` and `###` sections of a markdown doc with their field tables. */
export function readDocSections(markdown: string): DocSection[] {
  const sections: DocSection[] = [];
  let current: DocSection | undefined;
  let inTable = false;
  let inFence = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) return;
    const heading = /^#{2,3}\s+(.*?)\s*$/.exec(line);
    if (heading) {
      current = { heading: heading[1]!, anchor: anchorOf(heading[1]!), line: i + 1, fields: [], includes: [], codeSpans: [] };
      sections.push(current);
      inTable = false;
      return;
    }
    if (!current) return;
    if (line.trim().startsWith('|')) {
      const row = cells(line);
      if (row[0] === 'field') inTable = true;
      else if (inTable && !/^-+$/.test(row[0]!.replace(/:/g, ''))) {
        const name = unquote(row[0]!);
        const type = unquote(row[1] ?? '');
        if (name === undefined || type === undefined) throw new Error(`line ${i + 1}: a field row needs \`name\` and \`type\` in backticks: ${line}`);
        current.fields.push({ name: name.replace(/\?$/, ''), optional: name.endsWith('?'), type, meaning: row[2] ?? '', line: i + 1 });
      }
      return;
    }
    inTable = false;
    if (/^Fields:/.test(line)) for (const m of line.matchAll(/\]\(#([^)]+)\)/g)) current.includes.push(m[1]!);
    for (const m of line.matchAll(/`([^`]+)`/g)) current.codeSpans.push(m[1]!);
  });
  return sections;
}
