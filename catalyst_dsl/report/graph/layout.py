"""Where each box of a graph goes: a small layered layout (top to bottom), no dependency.

1. Arrows that go back (a loop's way round, a call cycle) are found by a depth-first walk
   and set aside, so what remains has no cycle.
2. Each box's layer is the length of the longest path to it (a box sits below every box
   that leads to it); an arrow that spans several layers gets a point in each.
3. A few sweeps down and up order each layer by the barycentre (mean position) of the
   boxes each is joined to in the layer above (below), which untangles most crossings.
4. Each box is pulled towards the mean of the boxes it is joined to, keeping its row's
   order and gaps; an arrow is a polyline through its points, a back arrow a curve (its
   points are the curve's ends and control points) round the side of the boxes it joins.
"""

from __future__ import annotations

from catalyst_dsl._internal.records import record
from catalyst_dsl.report.graph.model import Graph, Link, shown

#: Sizes in pixels: the font, the room a character takes, gaps between boxes and rows.
FONT_SIZE = 13
CHAR_WIDTH = 7.4
BOX_HEIGHT = 40
DECISION_HEIGHT = 56
#: A point where ways meet (a dot, no label).
MERGE_SIZE = 12.0
ROW_GAP = 56
COLUMN_GAP = 36
MARGIN = 24
SWEEPS = 4
#: The least x of a back arrow's bend: room for its label left of it.
LEFT_ROOM = 48.0


@record
class Box:
    """A box's centre and size."""

    x: float
    y: float
    width: float
    height: float


@record
class Route:
    link: Link
    points: tuple[tuple[float, float], ...]
    back: bool


@record
class Layout:
    boxes: dict
    routes: tuple[Route, ...]
    width: float
    height: float


def box_size(label: str, kind: str) -> tuple[float, float]:
    text = len(shown(label)) * CHAR_WIDTH
    if kind == "decision":
        return max(90.0, text + 70), DECISION_HEIGHT
    if kind == "join":
        return max(60.0, text + 24), BOX_HEIGHT
    if kind == "merge":
        return MERGE_SIZE, MERGE_SIZE
    return max(80.0, text + 28 + (24 if kind in ("checkpoint", "loop", "call", "try") else 0)), BOX_HEIGHT


def layout(graph: Graph) -> Layout:
    ids = [n.id for n in graph.nodes]
    drawn = set(ids)  # once: made again for every arrow, it had made a large flow quadratic
    links = [link for link in graph.links if link.source in drawn and link.target in drawn]
    back = _back_links(ids, links)
    forward = [link for link in links if id(link) not in back]
    layer = _layers(ids, forward)
    # Each forward arrow as a chain of points, one per layer it crosses ("dummies").
    rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
    for ident in ids:
        rows[layer[ident]].append(ident)
    chains: dict[int, list[str]] = {}
    up: dict[str, list[str]] = {ident: [] for ident in ids}
    down: dict[str, list[str]] = {ident: [] for ident in ids}
    for index, link in enumerate(forward):
        chain = [link.source]
        for depth in range(layer[link.source] + 1, layer[link.target]):
            dummy = f"·{index}·{depth}"
            rows[depth].append(dummy)
            up[dummy], down[dummy] = [], []
            chain.append(dummy)
        chain.append(link.target)
        for above, below in zip(chain, chain[1:]):
            down[above].append(below)
            up[below].append(above)
        chains[index] = chain
    _order(rows, up, down)
    sizes = {n.id: box_size(n.label, n.kind) for n in graph.nodes}
    boxes, width, height = _place(rows, sizes, up, down)
    routes = [
        Route(link, tuple((boxes[p].x, boxes[p].y) for p in chains[index]), False) for index, link in enumerate(forward)
    ]
    routes += [Route(link, (), True) for link in links if id(link) in back]
    spans = [_ends(route, boxes) for route in routes]
    # A back arrow round the left needs room for itself and its label: move everything right.
    room = LEFT_ROOM - min((route.points[1][0] for route in spans if route.back), default=LEFT_ROOM)
    if room > 0:
        boxes = {ident: Box(b.x + room, b.y, b.width, b.height) for ident, b in boxes.items()}
        routes = [Route(r.link, tuple((x + room, y) for x, y in r.points), r.back) for r in routes]
        spans = [_ends(route, boxes) for route in routes]
        width += room
    real = {n.id: boxes[n.id] for n in graph.nodes}
    # Back arrows bend right of their boxes: room for them.
    bend = max((route.points[1][0] + 20 for route in spans if route.back), default=0)
    return Layout(real, tuple(spans), max(width, bend + MARGIN), height)


def _back_links(ids: list[str], links: list[Link]) -> set[int]:
    """The arrows that close a cycle, found walking depth first from each box in order."""
    out: dict[str, list[Link]] = {ident: [] for ident in ids}
    for link in links:
        out[link.source].append(link)
    state: dict[str, int] = {}  # 1 on the walk's path, 2 done
    back: set[int] = set()
    for root in ids:
        if root in state:
            continue
        state[root] = 1
        walk = [(root, iter(out[root]))]
        while walk:
            node, pending = walk[-1]
            for link in pending:
                seen = state.get(link.target)
                if seen == 1:
                    back.add(id(link))
                elif seen is None:
                    state[link.target] = 1
                    walk.append((link.target, iter(out[link.target])))
                    break
            else:
                state[node] = 2
                walk.pop()
    return back


def _layers(ids: list[str], forward: list[Link]) -> dict[str, int]:
    """Longest-path layering over the arrows that go forward (Kahn's order)."""
    into = {ident: 0 for ident in ids}
    out: dict[str, list[str]] = {ident: [] for ident in ids}
    for link in forward:
        into[link.target] += 1
        out[link.source].append(link.target)
    layer = {ident: 0 for ident in ids}
    ready = [ident for ident in ids if into[ident] == 0]
    while ready:
        node = ready.pop(0)
        for target in out[node]:
            layer[target] = max(layer[target], layer[node] + 1)
            into[target] -= 1
            if into[target] == 0:
                ready.append(target)
    return layer


def _order(rows: list[list[str]], up: dict[str, list[str]], down: dict[str, list[str]]) -> None:
    def sweep(sequence, neighbours) -> None:
        for depth in sequence:
            previous = rows[depth - 1] if neighbours is up else rows[depth + 1]
            where = {ident: i for i, ident in enumerate(previous)}
            at = {ident: i for i, ident in enumerate(rows[depth])}

            def centre(ident: str) -> float:
                joined = [where[n] for n in neighbours[ident] if n in where]
                return sum(joined) / len(joined) if joined else at[ident]

            rows[depth].sort(key=centre)

    for _ in range(SWEEPS):
        sweep(range(1, len(rows)), up)
        sweep(range(len(rows) - 2, -1, -1), down)
    sweep(range(1, len(rows)), up)


def _place(
    rows: list[list[str]], sizes: dict[str, tuple[float, float]], up: dict[str, list[str]], down: dict[str, list[str]]
) -> tuple[dict[str, Box], float, float]:
    """Centres: each box as near as its row allows to the mean of the boxes it is joined
    to (above on the way down, below on the way up), so chains of arrows run straight."""

    def width(ident: str) -> float:
        return sizes.get(ident, (8.0, BOX_HEIGHT))[0]  # a dummy point: narrow

    x: dict[str, float] = {}
    for row in rows:  # a first guess: packed from the left
        left = 0.0
        for ident in row:
            x[ident] = left + width(ident) / 2
            left += width(ident) + COLUMN_GAP
    for _ in range(SWEEPS):
        for row in rows:
            _pull(row, x, up, width)
        for row in reversed(rows):
            _pull(row, x, down, width)
    for row in rows:
        _pull(row, x, up, width)
    lowest = min((x[i] - width(i) / 2 for row in rows for i in row), default=0.0)
    boxes: dict[str, Box] = {}
    y = MARGIN
    for row in rows:
        tallest = max((sizes.get(i, (0, BOX_HEIGHT))[1] for i in row), default=BOX_HEIGHT)
        for ident in row:
            boxes[ident] = Box(
                x[ident] - lowest + MARGIN, y + tallest / 2, width(ident), sizes.get(ident, (0, BOX_HEIGHT))[1]
            )
        y += tallest + ROW_GAP
    right = max((b.x + b.width / 2 for b in boxes.values()), default=0.0)
    return boxes, right + MARGIN, y - ROW_GAP + MARGIN


def _pull(row: list[str], x: dict[str, float], neighbours: dict[str, list[str]], width) -> None:
    """Move the boxes of `row` towards their neighbours' mean, keeping their order and gaps."""
    wanted = [sum(x[n] for n in neighbours[i]) / len(neighbours[i]) if neighbours[i] else x[i] for i in row]
    placed: list[float] = []
    for k, ident in enumerate(row):
        least = placed[-1] + (width(row[k - 1]) + width(ident)) / 2 + COLUMN_GAP if placed else -1e9
        placed.append(max(wanted[k], least))
    # Packing only pushes right: shift the row back so that it sits on its wishes on average.
    shift = sum(w - p for w, p in zip(wanted, placed)) / len(row) if row else 0.0
    for ident, at in zip(row, placed):
        x[ident] = at + shift


def _ends(route: Route, boxes: dict[str, Box]) -> Route:
    """The route's first and last points moved from the boxes' centres to their edges."""
    source, target = boxes[route.link.source], boxes[route.link.target]
    if route.back and source is target:
        # A box that leads to itself: a small loop on its right, in the gap to the next box.
        right = source.x + source.width / 2
        points = (
            (right, source.y - 8),
            (right + 30, source.y - 26),
            (right + 30, source.y + 26),
            (right, source.y + 8),
        )
        return Route(route.link, points, True)
    if route.back:
        # Round the side the source is on, so that the curve leaves no box behind it.
        side = -1 if source.x < target.x else 1
        if side > 0:
            lane = max(source.x + source.width / 2, target.x + target.width / 2) + 40
        else:
            lane = min(source.x - source.width / 2, target.x - target.width / 2) - 40
        points = (
            (source.x + side * source.width / 2, source.y),
            (lane, source.y),
            (lane, target.y),
            (target.x + side * target.width / 2, target.y),
        )
        return Route(route.link, points, True)
    points = list(route.points)
    points[0] = (points[0][0], source.y + source.height / 2)
    points[-1] = (points[-1][0], target.y - target.height / 2)
    return Route(route.link, tuple(points), False)
