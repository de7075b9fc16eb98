/**
 * Whether `actual` is the output a doc shows as `expected`, where `…` stands
 * for what differs between runs: inside a line it matches any text on that
 * line; a line holding only `…` matches any number of lines (none included).
 * Every other character must be the same; trailing spaces are ignored.
 */
export function matchesShownOutput(expected: string, actual: string): boolean {
  return shownOutputPattern(expected).test(normalize(actual));
}

/** The regular expression `matchesShownOutput` uses (exported for failure messages and specs). */
export function shownOutputPattern(expected: string): RegExp {
  const lines = normalize(expected).split('\n').slice(0, -1);
  const parts = lines.map((line) => {
    if (line.trim() === '…') return '(?:[^\\n]*\\n)*?';
    return `${line.split('…').map(escape).join('[^\\n]*?')}\\n`;
  });
  return new RegExp(`^${parts.join('')}$`, 'u');
}

function normalize(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n').map((l) => l.replace(/\s+$/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return `${lines.join('\n')}\n`;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
