"""A graph as Mermaid `flowchart TD` text, for Markdown on GitHub and in pull requests.

Labels are user text (step names, conditions, playbook names); each is written as a
quoted label, in which Mermaid reads every character as text but the quote that ends it.
What Mermaid or the page would still make something of is written as a named HTML
entity: the quote, `<` and `>` (a tag: Mermaid's labels are HTML), `&` (an entity of the
user's own), `#` (Mermaid's `#…;` codes), `%` (`%%{…}%%` is a directive
wherever it stands), the backtick (a Markdown string) and the
backslash (a backslash and an `n` break the line). Mermaid's own `#34;` codes are not used: Mermaid 11
leaves them undecoded in HTML labels. Box ids are ours (`n3`, `p0`), never the user's.
"""

from __future__ import annotations

from catalyst_dsl.report.graph.model import Graph, shown

#: Each kind's shape: the brackets around its quoted label.
_SHAPES = {
    "start": ("([", "])"),
    "end": ("([", "])"),
    "step": ("[", "]"),
    "decision": ("{", "}"),
    "loop": ("[/", "\\]"),
    "fork": ("[[", "]]"),
    "join": ("((", "))"),
    "merge": ("((", "))"),
    "checkpoint": ("{{", "}}"),
    "call": ("[[", "]]"),
    "try": (">", "]"),
    "elided": ("[", "]"),
    "playbook": ("[", "]"),
    "missing": ("[", "]"),
}

#: The arrow of each link style; `back` and `error` are dotted, `cycle` thick.
_ARROWS = {"normal": "-->", "back": "-.->", "error": "-.->", "cycle": "==>"}

#: The characters a label writes as named entities (each decoded by the browser, as text).
_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "#": "&num;",
    "`": "&grave;",
    "\\": "&bsol;",
    "%": "&percnt;",
}


def label_text(text: str) -> str:
    """`text` as the inside of a quoted Mermaid label: short, on one line, escaped."""
    return "".join(_ENTITIES.get(c, c) for c in shown(text))


def to_mermaid(graph: Graph) -> str:
    lines = ["flowchart TD"]
    for node in graph.nodes:
        left, right = _SHAPES.get(node.kind, ("[", "]"))
        # A merge point has no words; Mermaid draws an empty quoted label as no box at all.
        text = label_text(node.label) or " "
        lines.append(f'    {node.id}{left}"{text}"{right}')
    red: list[int] = []
    for index, link in enumerate(graph.links):
        arrow = _ARROWS.get(link.style, "-->")
        said = f'|"{label_text(link.label)}"|' if link.label else ""
        lines.append(f"    {link.source} {arrow}{said} {link.target}")
        if link.style in ("error", "cycle"):
            red.append(index)
    if red:
        lines.append(f"    linkStyle {','.join(map(str, red))} stroke:#b91c1c,color:#b91c1c")
    lines.append("    classDef marked fill:#fee2e2,stroke:#b91c1c,color:#7f1d1d")
    lines.append("    classDef faint fill:#f3f4f6,stroke:#9ca3af,stroke-dasharray:4 3,color:#4b5563")
    marked = [n.id for n in graph.nodes if n.marked]
    faint = [n.id for n in graph.nodes if n.kind in ("elided", "missing")]
    if marked:
        lines.append(f"    class {','.join(marked)} marked")
    if faint:
        lines.append(f"    class {','.join(faint)} faint")
    return "\n".join(lines) + "\n"
