#!/usr/bin/env python3
"""Whether two trees of rewritten sources differ only in layout.

    scripts/same-but-layout.py [--code-only] OLD_DIR NEW_DIR

For every .cu file under OLD_DIR that differs from the one of the same path
under NEW_DIR, compares the two with the differences a formatter makes taken
away: blanks and line breaks, the splitting of a string literal into adjacent
pieces, and the comment markers that reflowing comments adds or removes
('//' at each line). With --code-only, comments are taken away too (for a
change that moves or rewords comments). Prints one line per file whose code
differs otherwise and a summary; exits 1 if there is one, or if a file is
missing on either side.
"""
import pathlib
import re
import sys

_ADJACENT_STRINGS = re.compile(r'(?<!\\)""')
_COMMENT_OR_LITERAL = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
    re.S)


def without_comments(text):
    """The text with its comments taken away (string literals kept)."""
    return _COMMENT_OR_LITERAL.sub(
        lambda m: ' ' if m.group(0).startswith('/') else m.group(0), text)
_COMMENT_MARKERS = re.compile(r'//+')


def layout_free(text):
    """The text with what layout may change taken away."""
    text = re.sub(r'\s+', '', text)
    text = _ADJACENT_STRINGS.sub('', text)
    return _COMMENT_MARKERS.sub('', text)


def main(argv):
    code_only = '--code-only' in argv
    argv = [a for a in argv if a != '--code-only']
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    names = sorted({p.relative_to(old) for p in old.rglob('*.cu')} |
                   {p.relative_to(new) for p in new.rglob('*.cu')})
    same = layout = 0
    differ = []
    for name in names:
        a, b = old / name, new / name
        if not a.exists() or not b.exists():
            differ.append(f'{name}: only in {old if a.exists() else new}')
            continue
        ta, tb = a.read_text(), b.read_text()
        if code_only:
            ta, tb = without_comments(ta), without_comments(tb)
        if ta == tb:
            same += 1
        elif layout_free(ta) == layout_free(tb):
            layout += 1
        else:
            differ.append(f'{name}: the code differs')
    for line in differ:
        print(line)
    print(f'{len(names)} files: {same} identical, {layout} differ only in '
          f'layout, {len(differ)} differ otherwise')
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
