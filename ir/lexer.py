"""Tokenizer of the textual form. Tokens carry line:column for the parser's error messages."""
from __future__ import annotations

import re

from .records import record


class ParseError(ValueError):
    """A syntax or typing error in IR text; the message starts with `line:col:`."""

    def __init__(self, msg: str, line: int, col: int, source_line: str | None = None):
        text = f"{line}:{col}: {msg}"
        if source_line is not None:
            text += f"\n  {source_line}\n  {' ' * (col - 1)}^"
        super().__init__(text)
        self.msg, self.line, self.col = msg, line, col


@record(frozen=True, slots=True)
class Token:
    kind: str  # VALUE, SYMBOL, BLOCK, STRING, FLOAT, INT, IDENT, PUNCT, EOF
    text: str
    line: int
    col: int

    def describe(self) -> str:
        return "end of input" if self.kind == "EOF" else repr(self.text)


_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\n]+|\#[^\n]*)
  | (?P<VALUE>%[A-Za-z0-9_.$]+(?:\#[0-9]+)?)
  | (?P<SYMBOL>@(?:[A-Za-z_][A-Za-z0-9_.$]*|"(?:[^"\\\n]|\\.)*"))
  | (?P<BLOCK>\^[A-Za-z0-9_]+)
  | (?P<STRING>"(?:[^"\\\n]|\\.)*")
  | (?P<FLOAT>[0-9]+(?:\.[0-9]*(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+))
  | (?P<INT>[0-9]+)
  | (?P<IDENT>[A-Za-z_][A-Za-z0-9_.$]*)
  | (?P<PUNCT>->|>=|<=|==|!=|\*\*|//|[()\[\]{}<>,:=+\-*/&|~])
""", re.VERBOSE)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos, line, line_start = 0, 1, 0
    lines = text.split("\n")
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            col = pos - line_start + 1
            raise ParseError(f"unexpected character {text[pos]!r}", line, col, lines[line - 1])
        kind = m.lastgroup
        if kind != "ws":
            tokens.append(Token(kind, m.group(), line, pos - line_start + 1))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            line_start = m.start() + m.group().rindex("\n") + 1
        pos = m.end()
    tokens.append(Token("EOF", "", line, pos - line_start + 1))
    return tokens
