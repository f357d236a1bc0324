"""Hostile values for script tests: each would run `touch PWNED`, end a quote or a
here-document, or be read as an option or a subscript, if a script read it as code."""

PAYLOADS = {
    "semicolon": "x; touch PWNED",
    "substitution": "$(touch PWNED)",
    "backticks": "`touch PWNED`",
    "single-quote": "x' ; touch PWNED; '",
    "double-quote": 'x" ; touch PWNED; "',
    "newline": "\ntouch PWNED",
    "variable": "$HOME",
    "backslash": "\\",
    "glob": "*",
    "option": "--flag",
    "spaces": "a  b\tc",
    "empty": "",
    "here-doc-end": "EOF\ntouch PWNED",
    "unicode": "é ‘’ “” „ `$",
    "plain": "hello-world_1.0",
    "comma": "b,c",
    "subscript": "a[$(touch PWNED)]",
    "ansi-quote": "'$'\\'' ; touch PWNED",
}
