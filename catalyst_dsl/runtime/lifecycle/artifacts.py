"""The artifacts a playbook promises (`artifacts:`): checked to exist when its run
finishes, or the run fails with ArtifactMissing.
"""

from __future__ import annotations

from typing import Any

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.lifecycle.context import RunContext


def check_artifacts(context: RunContext, playbook: ir.Playbook, values: dict[str, Any]) -> None:
    # Imported here: the glob machinery is for a playbook that lists artifacts.
    from catalyst_dsl.paths.globs import Glob, GlobError
    from catalyst_dsl.runtime.values.evaluate import materialize, to_text

    root = context.project.root
    missing = []
    env = context.inputs_env(values)
    for value in playbook.artifacts:
        text = to_text(materialize(value, env))
        rel = place(text).path
        if rel is None:
            continue
        try:
            glob = Glob.compile(rel)
        except GlobError as error:
            # `artifacts: ["{{dir}}"]` given `.` or nothing: the check tells a plain path (C812), not a template.
            raise StepError(
                "InvalidArtifact",
                f"the artifact '{text}' is not a file or a pattern in the project: {error}",
                guidance="list each artifact as a path or a glob relative to the project, e.g. out/report.md",
            ) from None
        if glob.is_literal:
            found = (root / rel).exists()
        else:
            found = any(glob.matches(p.relative_to(root).as_posix()) for p in root.rglob("*") if p.is_file())
        if not found:
            missing.append(text)
    if missing:
        raise StepError(
            "ArtifactMissing",
            f"the run finished but these artifacts do not exist: {', '.join(missing)}",
            guidance="the steps that should create them did not; check their paths",
        )
