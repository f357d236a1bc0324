"""A split check finds exactly what one process finds, on random libraries (seeded)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from catalyst_dsl.cli.check_command import project_files
from catalyst_dsl.project import shards
from catalyst_dsl.project.check import check_project

KAI_COMMAND = 'steps:\n  - id: "plan"\n    command: "/speckit.plan"\n    autonomy: "auto"\n'
CLEO = "name: c1\nnodes:\n  - id: build\n    type: deterministic\n    command: pnpm\n    args: [run, build]\n"
NOT_PLAYBOOKS = ("name: [unclosed\n", "just: data\nlist: [1, 2]\n", "- a\n- b\n", ":\n  - : x\n")
NESTED_DIRS = '["playbooks/sub", "playbooks", ".xe/playbooks", ".playbooks/playbooks", ".cleo/playbooks"]'


class _Library:
    """One random library under `root`: calls by name and by path (in and out of the
    playbook folders), Markdown `@path` references, twins, names that differ from the file
    stem, duplicates, self-calls, cycles, wrong inputs, grants, dynamic calls, broken and
    non-playbook YAML, kai and cleo playbooks, settings with errors, `exclude`, `.gitignore`,
    nested playbook folders, a link to a playbook."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root, self.rnd = root, random.Random(seed)
        self.names = [f"p{i}" for i in range(self.rnd.randint(4, 28))]

    def chance(self, p: float) -> bool:
        return self.rnd.random() < p

    def build(self) -> None:
        rnd, root, names = self.rnd, self.root, self.names
        self.settings()
        (root / "playbooks" / "sub").mkdir(parents=True)
        (root / "shared").mkdir()
        if self.chance(0.3):
            (root / ".gitignore").write_text("playbooks/ignored-*\n")
            (root / ".git").mkdir()
        for name in names:
            r = rnd.random()
            folder = root / ("playbooks/sub" if r < 0.15 else ".xe/playbooks" if r < 0.25 else "playbooks")
            folder.mkdir(parents=True, exist_ok=True)
            own = names[rnd.randrange(len(names))] if self.chance(0.07) else name  # C802, C803
            stem = f"skip-{name}" if self.chance(0.05) else f"ignored-{name}" if self.chance(0.05) else name
            kind = rnd.random()
            if kind < 0.12:
                (folder / f"{stem}.md").write_text(self.markdown(own))
            elif kind < 0.16:
                (folder / f"{stem}.yaml").write_text(rnd.choice(NOT_PLAYBOOKS))
            else:
                (folder / f"{stem}.yaml").write_text(self.yaml(name, own))
                if self.chance(0.1):  # its twin
                    (folder / f"{stem}.md").write_text(self.markdown(own))
        if self.chance(0.3):
            (root / "playbooks" / "linked.yaml").symlink_to(root / "playbooks" / "p0.yaml")
        if self.chance(0.3):
            (root / ".xe" / "playbooks").mkdir(parents=True, exist_ok=True)
            (root / ".xe" / "playbooks" / "x0.yaml").write_text(
                f"name: x0\ndescription: d\nowner: Engineer\nsteps:\n  - playbook: {names[-1]}\n"
            )
        (root / "shared" / "helper.yaml").write_text(
            "name: helper\ndescription: h\nowner: Engineer\ninputs:\n  - string: topic\n    required: true\n"
            "steps:\n  - playbook: p0\n"
        )
        if self.chance(0.4):
            self.kai()
        if self.chance(0.3):
            (root / ".cleo" / "playbooks").mkdir(parents=True)
            version = rnd.choice(["1.0", '"1.0"'])
            (root / ".cleo" / "playbooks" / "c1.cantbook").write_text(f"version: {version}\n{CLEO}")

    def settings(self) -> None:
        lines = []
        for p, line in [
            (0.2, 'exclude = ["playbooks/skip-*"]'),
            (0.15, "max-depth = 3"),
            (0.1, 'roles = ["Engineer", 7]'),
            (0.1, "check-cache = false"),
            (0.15, 'aliases = { "lib/" = "playbooks/" }'),
            (0.3, f"playbook-dirs = {NESTED_DIRS}"),
        ]:
            if self.chance(p):
                lines.append(line)
        (self.root / "catalyst.toml").write_text("\n".join(lines) + "\n")

    def target(self) -> str:
        rnd, names = self.rnd, self.names
        j = rnd.randrange(len(names) + 2)
        if j >= len(names):
            return rnd.choice(
                [
                    "missing-one",
                    "shared/helper.yaml",
                    "../shared/helper.yaml",
                    "../../shared/helper.yaml",
                    "{{ topic }}",
                    "xe://playbooks/x0.yaml",
                    "x0",
                    f"sub/{names[0]}.yaml",
                ]
            )
        how = rnd.random()
        return names[j] if how < 0.6 else f"{names[j]}.yaml" if how < 0.8 else f"playbooks/{names[j]}.yaml"

    def markdown(self, name: str) -> str:
        names = self.names
        refs = " ".join(f"@playbooks/{self.rnd.choice(names)}.yaml" for _ in range(self.rnd.randint(0, 2)))
        if self.chance(0.3):
            refs += f" @lib/{self.rnd.choice(names)}.yaml"
        if self.chance(0.2):
            refs += " @shared/helper.yaml"
        head = f"---\nname: {name}\nowner: Engineer\n---\n# {name}\n\n"
        return f"{head}## Inputs\n- **topic**: t\n\n## Phase 1: Go\nUse {refs} now.\n"

    def yaml(self, stem: str, name: str) -> str:
        rnd, steps = self.rnd, []
        for _ in range(rnd.randint(0, 3)):
            target = name if self.chance(0.08) else self.target()
            if self.chance(0.3):
                guard = "  - if: \"${{ topic == 'x' }}\"\n    then:\n"
                call, indent = f'{guard}      - playbook: "{target}"\n', " " * 8
            else:
                call, indent = f'  - playbook: "{target}"\n', " " * 4
            if self.chance(0.3):
                call += f"{indent}inputs:\n{indent}  {rnd.choice(['topic', 'wrong', 'other'])}: x\n"
            if self.chance(0.3):
                call += f"{indent}inheritPermissions: {rnd.choice(['true', 'false'])}\n"
            steps.append(call)
        if self.chance(0.3):
            steps.append(f"  - file-write: out/{rnd.choice(self.names)}/x.md\n    content: x\n")
        if not steps or self.chance(0.3):
            steps.append("  - display: hi\n")
        extra = ""
        if self.chance(0.4):
            extra += f"inputs:\n  - string: topic\n    required: {rnd.choice(['true', 'false'])}\n"
        if self.chance(0.5):
            extra += f"allowedWritePaths: ['out/{rnd.choice([stem, 'x'])}/**']\n"
        return f"name: {name}\ndescription: d {stem}\nowner: Engineer\n{extra}steps:\n{''.join(steps)}"

    def kai(self) -> None:
        kai = self.root / ".playbooks" / "playbooks"
        kai.mkdir(parents=True)
        index = 'generated: "2026-11-20T10:00:00Z"\nplaybooks:\n'
        for k in range(self.rnd.randint(1, 3)):
            (kai / f"k{k}.yaml").write_text(f'name: "k{k}"\ndescription: "K {k}"\nversion: "1.0"\n\n{KAI_COMMAND}')
            changed = self.rnd.choice(["", " changed"])
            index += f'  - name: "k{k}"\n    file: "playbooks/k{k}.yaml"\n'
            index += f'    description: "K {k}{changed}"\n    steps: 1\n'
        (self.root / ".playbooks" / "_index.yaml").write_text(index)
        (self.root / ".claude" / "commands").mkdir(parents=True)
        (self.root / ".claude" / "commands" / "speckit.plan.md").write_text("Run.\n")


def _compare(root: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """Check the library of `seed` whole and split three ways; the splits made."""
    _Library(root, seed).build()
    monkeypatch.chdir(root)
    project, settings, files, scanned = project_files(())
    whole = check_project(project, files, settings=settings, scanned=scanned, callers=True)
    made = 0
    for jobs, min_share in ((2, 1), (3, 2), (4, 1)):
        split = shards.check_split(
            project, files, settings=settings, scanned=scanned, use_cache=False, jobs=jobs, min_share=min_share
        )
        if split is None:
            continue
        made += 1
        shards.finish(split)
        assert split.files == whole.files or sorted(split.files) == sorted(whole.files), seed
        assert split.diagnostics == whole.diagnostics, f"seed {seed}, {jobs} shares of at least {min_share}"
        assert all(child._answer is not None for child in split.children), "every share answered"
    return made


def _seeds(tmp_path: Path, seeds: range, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATALYST_SHELLCHECK", "no-shellcheck-here")
    made = 0
    for seed in seeds:
        root = tmp_path / str(seed)
        root.mkdir()
        made += _compare(root, seed, monkeypatch)
    assert made >= len(seeds), "most libraries are split, some in three and four shares"


def test_random_libraries_split_or_not_give_the_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _seeds(tmp_path, range(24), monkeypatch)


@pytest.mark.slow
def test_many_random_libraries_split_or_not_give_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seeds(tmp_path, range(24, 424), monkeypatch)


def test_nested_playbook_folders_hold_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`playbook-dirs` naming a folder and one inside it: the inner folder's playbooks are
    checked once, so no share sees them as a second playbook of their name (C802)."""
    (tmp_path / "catalyst.toml").write_text('playbook-dirs = ["playbooks/sub", "playbooks"]\n')
    (tmp_path / "playbooks" / "sub").mkdir(parents=True)
    for i, folder in enumerate(["playbooks", "playbooks", "playbooks/sub", "playbooks/sub"]):
        (tmp_path / folder / f"p{i}.yaml").write_text(
            f"name: p{i}\ndescription: d\nowner: Engineer\nsteps:\n  - display: hi\n"
        )
    monkeypatch.chdir(tmp_path)
    project, settings, files, scanned = project_files(())
    assert len(files) == len(set(files)) == 4
    split = shards.check_split(project, files, settings=settings, scanned=scanned, use_cache=False, jobs=2, min_share=1)
    assert split is not None
    shards.finish(split)
    assert [d.code for d in split.diagnostics] == []
    assert os.path.basename(sorted(split.files)[0]) == "p0.yaml"
