"""An LALR(1) parser driver over the expression grammar's prebuilt tables.

Lark builds the tables once, when the package is built (`parser_tables.py` writes them as
JSON); this module only reads them, so checking a playbook never imports Lark, which cost
20-27 ms of every cold start. It behaves as Lark does for grammar/expressions.lark with
`parser_tables.OPTIONS`, and the test suite holds it to Lark's trees and errors:

- lexing is contextual: in each parser state only the terminals that state can act on
  (and the ignored ones) are tried, in Lark's order (priority, longest possible match,
  longest pattern, name), and the first that matches wins: one by one for a state's
  first tokens, then as one compiled alternation (`COMPILE_AFTER`);
- a literal terminal that a regex terminal of the same priority also matches in full
  (`true` and IDENT) is not tried on its own: a match of the regex whose text is that
  literal becomes the literal's token, so `x.true` is a member named true;
- when nothing acceptable matches, every terminal is tried to name the unexpected token;
- trees drop filtered tokens (anonymous punctuation), splice `_rule` children into their
  parent, stand a `?rule` with one child in for its child unless an alias names it, and
  carry start/end positions taken from the first and last child, punctuation included.
"""

from __future__ import annotations

import re

END = "$END"


class Token:
    """A terminal's text and where it lies in the parsed text."""

    __slots__ = ("type", "value", "start_pos", "end_pos")

    def __init__(self, type_: str, value: str, start_pos: int, end_pos: int) -> None:
        self.type = type_
        self.value = value
        self.start_pos = start_pos
        self.end_pos = end_pos

    # A token's container is the token itself (see Tree).
    @property
    def container_start_pos(self) -> int:
        return self.start_pos

    @property
    def container_end_pos(self) -> int:
        return self.end_pos

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r}, {self.start_pos}, {self.end_pos})"


class Tree:
    """A rule's node. start/end cover its own children; the container span also covers
    the punctuation of a `?rule` that stood this node in for itself (`(a)` holds the
    parentheses), and a parent takes its span from its children's containers."""

    __slots__ = ("data", "children", "start_pos", "end_pos", "container_start_pos", "container_end_pos")

    def __init__(self, data: str, children: list) -> None:
        self.data = data
        self.children = children
        self.start_pos = self.end_pos = None
        self.container_start_pos = self.container_end_pos = None

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r}, {self.start_pos}, {self.end_pos})"


class ParseError(Exception):
    """The text does not parse; `pos` is where reading stopped."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class UnexpectedCharacter(ParseError):
    """No terminal of the grammar starts at `pos`."""

    def __init__(self, text: str, pos: int, allowed: frozenset) -> None:
        super().__init__(f"unexpected character {text[pos : pos + 1]!r} at {pos}", pos)
        self.allowed = allowed


class UnexpectedToken(ParseError):
    """A token (or END, the end of the text) the parser cannot take in its state."""

    def __init__(self, token: Token, expected: frozenset) -> None:
        super().__init__(f"unexpected {token.type} {token.value!r} at {token.start_pos}", token.start_pos)
        self.token = token
        self.expected = expected


class TablesError(ValueError):
    """Tables of another shape than this driver reads."""


#: How many tokens a parser state reads by trying its terminals one by one, before they
#: are compiled into one alternation. Python compiles patterns in Python: a state's
#: alternation costs about 0.25 ms, as much as reading some hundred tokens a terminal at a
#: time, and a one-file check reads a few dozen tokens in each of a few states (compiling
#: all of them was 2 ms of it), a library check thousands.
COMPILE_AFTER = 100


class _Scanner:
    """The terminals one parser state can take, tried in Lark's order; after
    `COMPILE_AFTER` tokens, as one compiled alternation (which takes the first alternative
    that matches, so both ways read the same tokens)."""

    __slots__ = ("kept", "regex", "left", "patterns", "literal_of", "ignore", "allowed")

    def __init__(self, terminals: list, ignore: frozenset, keywords: dict, patterns: dict) -> None:
        present = {t[0] for t in terminals}
        # keywords: regex terminal -> {literal: literal terminal} it matches in full
        self.literal_of: dict[str, dict[str, str]] = {}
        embedded = set()
        for name in present & keywords.keys():
            here: dict[str, str] = {}
            for literal, lit_name in keywords[name]:
                if lit_name in present:
                    here.setdefault(literal, lit_name)
            if here:
                self.literal_of[name] = here
                embedded.update(here.values())
        # (name, the text when the terminal is that text exactly, its pattern)
        self.kept = [
            (name, value if kind == "str" and regexp == re.escape(value) else None, regexp)
            for name, kind, value, regexp, _p in terminals
            if name not in embedded
        ]
        self.regex = None
        self.left = COMPILE_AFTER
        #: The parser's compiled patterns of single terminals, shared by its states.
        self.patterns = patterns
        self.ignore = ignore
        # what an error says this state expected; Lark's name when only the end was
        self.allowed = frozenset(t[0] for t in self.kept) - ignore or frozenset({"<END-OF-FILE>"})

    def _match(self, text: str, pos: int) -> tuple[str, int] | None:
        """The first terminal, in order, that matches at `pos`: its name and where it ends.
        re.error when a terminal's pattern does not compile."""
        if self.regex is None:
            self.left -= 1
            if self.left >= 0:
                for name, literal, regexp in self.kept:
                    if literal is not None:
                        if text.startswith(literal, pos):
                            return name, pos + len(literal)
                        continue
                    pattern = self.patterns.get(regexp)
                    if pattern is None:
                        pattern = self.patterns[regexp] = re.compile(regexp)
                    match = pattern.match(text, pos)
                    if match is not None:
                        return name, match.end()
                return None
            self.regex = re.compile("|".join(f"(?P<{name}>{regexp})" for name, _literal, regexp in self.kept))
        match = self.regex.match(text, pos)
        return None if match is None else (match.lastgroup, match.end())

    def next_token(self, text: str, pos: int) -> Token | None:
        """The token at `pos` after any ignored text; None at the end; ParseError's
        position tells where nothing matched."""
        end = len(text)
        while pos < end:
            found = self._match(text, pos)
            if found is None:
                raise UnexpectedCharacter(text, pos, self.allowed)
            type_, after = found
            if type_ in self.ignore:
                pos = after
                continue
            value = text[pos:after]
            literal = self.literal_of.get(type_)
            if literal is not None:
                type_ = literal.get(value, type_)
            return Token(type_, value, pos, after)
        return None


class Parser:
    """The parser for one set of tables (as `parser_tables.build` writes them)."""

    def __init__(self, tables: dict) -> None:
        try:
            if tables.get("format") != FORMAT:
                raise TablesError(f"tables of format {tables.get('format')!r}, not {FORMAT}")
            self._terminals = [tuple(t) for t in tables["terminals"]]
            self._ignore = frozenset(tables["ignore"])
            self._keywords = {name: [tuple(pair) for pair in pairs] for name, pairs in tables["keywords"].items()}
            # (tree name, length, expand single child, [(index, splice)]) per rule
            self._rules = [
                (name, size, bool(expand1), [(i, bool(s)) for i, s in keep])
                for name, size, expand1, keep in tables["rules"]
            ]
            self._origins = list(tables["origins"])
            self._states = [dict(actions) for actions in tables["states"]]
            self._start = dict(tables["start"])
            self._end = dict(tables["end"])
            self._validate()
        except (KeyError, TypeError, ValueError) as error:
            raise TablesError(f"damaged tables: {error}") from None
        self._scanners: dict[frozenset, _Scanner] = {}
        self._patterns: dict[str, re.Pattern] = {}
        self._root: _Scanner | None = None

    def _validate(self) -> None:
        """Every number in the tables names a state, rule, child or terminal that exists,
        so damaged tables are refused here rather than midway through a parse. (That
        every goto a reduction needs is there is not searched for: Lark made the tables,
        and a test compares the shipped ones with a fresh build.)"""
        count, names = len(self._states), {t[0] for t in self._terminals}
        for name, kind, _value, regexp, priority in self._terminals:
            # (the patterns compile when a state first needs them: compiling each here
            # too cost 4 ms of every start)
            if kind not in ("str", "re") or not isinstance(priority, int) or not isinstance(regexp, str):
                raise ValueError(f"terminal {name}")
        if not self._ignore <= names or len(self._origins) != len(self._rules):
            raise ValueError("ignored terminals or rule origins")
        if not all(
            name in names and all(lit in names for _value, lit in pairs) for name, pairs in self._keywords.items()
        ):
            raise ValueError("keywords of unknown terminals")
        for _name, size, _expand1, keep in self._rules:
            if not all(0 <= index < size for index, _splice in keep):
                raise ValueError("a rule keeps a child it does not have")
        for actions in self._states:
            for action in actions.values():
                if not (isinstance(action, int) and -len(self._rules) <= action < count):
                    raise ValueError(f"action {action!r}")
        if not all(isinstance(s, int) and 0 <= s < count for s in [*self._start.values(), *self._end.values()]):
            raise ValueError("start or end state")

    def _scanner(self, state: int) -> _Scanner:
        accepts = frozenset(self._states[state])
        scanner = self._scanners.get(accepts)
        if scanner is None:
            wanted = accepts | self._ignore
            scanner = _Scanner(
                [t for t in self._terminals if t[0] in wanted], self._ignore, self._keywords, self._patterns
            )
            self._scanners[accepts] = scanner
        return scanner

    def _next_token(self, text: str, pos: int, state: int) -> Token | None:
        try:
            return self._scanner(state).next_token(text, pos)
        except UnexpectedCharacter as nothing:
            # Not acceptable here: name what stands there by every terminal of the grammar.
            if self._root is None:
                self._root = _Scanner(self._terminals, self._ignore, self._keywords, self._patterns)
            try:
                token = self._root.next_token(text, nothing.pos)
            except UnexpectedCharacter:
                raise nothing from None
            except re.error as error:
                raise TablesError(f"damaged tables: a terminal's pattern does not compile ({error})") from None
            if token is None:
                raise nothing from None
            raise UnexpectedToken(token, nothing.allowed) from None
        except re.error as error:  # (patterns compile when a state first needs them)
            raise TablesError(f"damaged tables: a terminal's pattern does not compile ({error})") from None

    def parse(self, text: str, start: str) -> Tree:
        states, rules, origins = self._states, self._rules, self._origins
        state_stack = [self._start[start]]
        value_stack: list = []
        end_state = self._end[start]
        pos, last = 0, None
        while True:
            token = self._next_token(text, pos, state_stack[-1])
            at_end = token is None
            if at_end:  # END stands where the last token starts, as in Lark
                token = Token(END, "", last.start_pos if last else 0, last.end_pos if last else 0)
            while True:
                actions = states[state_stack[-1]]
                action = actions.get(token.type)
                if action is None:
                    raise UnexpectedToken(token, frozenset(name for name in actions if name.isupper()))
                if action >= 0:  # shift
                    state_stack.append(action)
                    value_stack.append(token)
                    break
                rule = -action - 1
                name, size, expand1, keep = rules[rule]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value = _reduce(name, expand1, keep, children)
                state_stack.append(states[state_stack[-1]][origins[rule]])
                value_stack.append(value)
                if at_end and state_stack[-1] == end_state:
                    return value_stack[-1]
            last, pos = token, token.end_pos


def _reduce(name: str, expand1: bool, keep: list, children: list):
    kept: list = []
    for index, splice in keep:
        if splice:
            if not kept:
                # An inlined rule's tree is dropped here, so its list is taken over rather
                # than copied: a left-recursive list (a call's arguments, an array's
                # items) then grows in place, linear in its length instead of quadratic.
                kept = children[index].children
            else:
                kept.extend(children[index].children)
        else:
            kept.append(children[index])
    if expand1 and len(kept) == 1:
        node = kept[0]
        if not isinstance(node, Tree):
            return node
    else:
        node = Tree(name, kept)
    first = next((c for c in children if isinstance(c, Token) or c.start_pos is not None), None)
    if first is not None:
        if node.start_pos is None:
            node.start_pos = first.container_start_pos
        node.container_start_pos = first.container_start_pos
        last = next(c for c in reversed(children) if isinstance(c, Token) or c.start_pos is not None)
        if node.end_pos is None:
            node.end_pos = last.container_end_pos
        node.container_end_pos = last.container_end_pos
    return node


#: The shape of the tables this driver reads; `parser_tables.build` writes it.
FORMAT = 2
