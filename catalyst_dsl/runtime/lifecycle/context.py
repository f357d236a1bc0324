"""What the runs of one project share: the project and its settings, the store of snapshots,
the locks, the library, the plugins, the masker of secrets, the events, the AI adapters.

Every service of the run-time (starting, resuming, planning, approving, cancelling) is
given one `RunContext` and asks it for these; none of them holds state of its own. The
store, the locks, the approvers and the adapters are made when first used: a what-if
refused for its inputs never touches them (nor imports their modules).
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.actions.plugins import installed
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.project.config import Project, relative_to_root
from catalyst_dsl.project.library import Library
from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.lifecycle import preflight
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.events import Events
from catalyst_dsl.runtime.engine.scope import RunEnv, Scope
from catalyst_dsl.runtime.values.secrets import Masker
from catalyst_dsl.runtime.state.choice import open_store

# The interpreter, the effects gateway and the confinement (with all the actions) are
# imported where a run or a plan starts, after the playbook and its inputs are checked:
# a what-if refused for its inputs does not load them.
if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.gateway import EffectsGateway, Performer, RealPerformer


@record(frozen=False)
class RunOptions:
    """How the command line asked for a run: its mode, its log, its terminal, its performer."""

    mode: str = "manual"
    log_format: str = "text"
    verbose: bool = False
    #: Ask at checkpoints on this terminal; None: only when stdin is a terminal.
    interactive: bool | None = None
    performer: Performer | None = None
    out: Any = None
    #: A what-if sends its network reads (GET, HEAD) instead of leaving their results unknown.
    refresh: bool = False


class RunContext:
    """Runs of one project: the store, the locks, the library and the plugins they share."""

    def __init__(self, project: Project, options: RunOptions | None = None) -> None:
        self.project = project
        self.options = options or RunOptions()
        self.state_dir = project.resolve(project.config.state_dir)
        refuse_linked_state(project, self.state_dir)
        if self.state_dir.exists() and not self.state_dir.is_dir():
            raise RunAbort(
                EXIT_STATE,
                f"the state directory {relative_to_root(self.project, str(self.state_dir))} is a file",
                help="remove or rename it, or set state-dir in catalyst.toml to a directory",
            )
        self.plugins = installed()
        self.catalog = builtin_catalog()  # plugin actions join it when a playbook names them
        self.library = Library(project, catalog=self.catalog)
        self.masker = Masker()
        self.gateway: EffectsGateway | None = None
        #: What a what-if says beside its plan (on stderr, never in the plan itself).
        self.plan_notes: list[str] = []
        self.events = Events(
            log_format=self.options.log_format,
            out=self.options.out,
            mask=self.masker.mask,
            verbose=self.options.verbose,
        )

    @functools.cached_property
    def store(self):
        return open_store(self.project, self.state_dir)

    @functools.cached_property
    def approvers(self):
        """The `approvers` setting, read when someone approves: a what-if approves nobody."""
        from catalyst_dsl.ir.roles import Approvers

        return Approvers(self.project.config.approvers)

    @functools.cached_property
    def locks(self):
        from catalyst_dsl.runtime.state.locks import LockManager
        from catalyst_dsl.runtime.state.shared.settings import state_url

        if state_url(self.project.config.state_url) is not None:
            return self.store.locks  # runs on other machines hold locks too: the database's

        # The store is asked only about a lock another run holds: a what-if with no such
        # lock (most) never opens it, nor imports the snapshot codec and the integrity
        # checks that come with it (about 2 ms).
        return LockManager(self.state_dir / "locks", run_status=lambda run_id: self.store.peek_status(run_id))

    @functools.cached_property
    def ai(self):
        """The session's AI adapters, made when first needed: a run's pre-flight (`start`,
        `resume`) asks before any step runs; a what-if never does, and the adapters'
        modules would cost it about a millisecond."""
        from catalyst_dsl.runtime.adapters.attempts import gateway_runner
        from catalyst_dsl.runtime.adapters.choice import AdapterChoice

        # One per session: a scripted mock answer is used once across all steps.
        return AdapterChoice(
            self.project,
            self.plugins,
            self.provided_secret,
            runner=lambda: gateway_runner(self.gateway),
            notice=lambda text: self.events.notice(text),
            mask=self.add_secret,
        )

    def adapter(self, name: str | None):
        return self.ai.adapter(name)

    def checked(self, file: str, *, cached: bool = False, checked=None) -> ir.Playbook:
        """The playbook, or RunAbort(1) with every error `catalyst check` would print
        (runtime/lifecycle/preflight.py); `checked`: that check, made already."""
        result = checked if checked is not None else preflight.checked(self.project, file, cached=cached)
        self.library = result.library
        return result.library.compiled(file).playbook

    def warn_about_key(self) -> None:
        """Say once when snapshots are sealed with the key kept beside them (integrity/run_key.py)."""
        from catalyst_dsl.runtime.state.integrity.run_key import KEY_ENV

        key = self.store.run_key()
        if not key.outside_state:
            self.events.message(
                "warning",
                f"snapshots are sealed with {relative_to_root(self.project, key.source)}, "
                "a key in the state directory: it does not protect them from anyone who can write there; "
                f"set {KEY_ENV} or make your config directory writable",
            )

    def secret(self, name: str) -> str | None:
        """A secret input's value from the providers: the environment, then the OS keychain
        (when `secrets-keyring` is on), then `secrets-file`."""
        from catalyst_dsl.runtime.values.secrets import (
            EnvSecretProvider,
            FileSecretProvider,
            KeyringSecretProvider,
            SecretFileError,
        )

        config = self.project.config
        value = EnvSecretProvider().lookup(name)
        try:
            if value is None and config.secrets_keyring:
                value = KeyringSecretProvider().lookup(name)
            if value is None and config.secrets_file:
                value = FileSecretProvider(self.project.resolve(config.secrets_file)).lookup(name)
        except SecretFileError as error:
            raise RunAbort(
                EXIT_INVALID, f"cannot read secrets from {error.path}: {error.problem}", help=error.fix
            ) from None
        return value

    def provided_secret(self, name: str) -> str | None:
        """A secret an action asks for by name (a token): found, then masked everywhere."""
        value = self.secret(name)
        if value is not None:
            self.add_secret(value)
        return value

    def masked_comment(self, state, comment: str | None) -> str | None:
        """An approval comment as it is stored: masked like everything else.

        Outside the run (`approve`, a webhook) the run's secrets are known only from the
        providers (environment, secrets-file); a secret given on the run's command line
        alone cannot be recognised there.
        """
        if not comment:
            return comment
        for name in state.secret_inputs:
            self.provided_secret(name)
        return self.masker.mask_text(comment)

    def mark_secrets(self, values: dict[str, Any], secrets: list[str]) -> None:
        """Mark the secret inputs' values, so every value computed from them is secret too (runtime/values/taint.py)."""
        from catalyst_dsl.runtime.values.taint import secret_text

        for name in secrets:
            if name in values:
                values[name] = secret_text(values[name], name, self.masker)

    def add_secret(self, value: Any) -> None:
        self.masker.add(value)
        if isinstance(value, str) and "\n" in value:
            # Output is shown line by line: each line of a multi-line secret (a key file)
            # must be recognisable alone.
            for line in value.splitlines():
                if len(line.strip()) >= 6:
                    self.masker.add(line.strip())

    @contextlib.contextmanager
    def changing(self, run_id: str, *, unverified: bool = False):
        """Load-change-save of a run's snapshot from outside the run, as one change under the
        guard: a concurrent resume sees it, or refuses it. A run that does not exist is
        reported before anything (the guard's directory) is created; so is one that does
        not verify, unless `unverified` (a cancel, which runs nothing of it)."""
        if unverified:
            self.store.inspect(run_id)
        else:
            self.store.load(run_id, results=False)
        with self.locks.guard():
            yield

    def real_performer(self, run_id: str | None) -> RealPerformer:
        """Effects for real: programs confined (or the run told once why not), their process
        groups recorded beside the snapshot (a run's; None: before there is a run)."""
        from catalyst_dsl.runtime.effects.confinement import Confiner
        from catalyst_dsl.runtime.effects.gateway import RealPerformer
        from catalyst_dsl.runtime.effects.process_groups import ProcessGroups

        confiner = Confiner(
            required=self.project.config.require_confinement, notice=lambda text: self.events.message("warning", text)
        )
        groups = ProcessGroups.of_run(self.state_dir, run_id, self.store.run_key().secret) if run_id else None
        return RealPerformer(confiner, groups)

    def new_gateway(self, playbook: ir.Playbook, grants: list[str] | None, scratch: Path, performer) -> EffectsGateway:
        """The effects gateway of a run or a plan: the playbook's grants, the state directory
        protected, the resources readable."""
        from catalyst_dsl.runtime.effects.gateway import EffectsGateway
        from catalyst_dsl.runtime.effects.grants import Grants

        return EffectsGateway(
            self.project.root,
            scratch,
            (Grants.of(playbook.name, grants),),
            performer,
            protected=(relative_to_root(self.project, str(self.state_dir)),),
            resources=self.project.resources_dir(),
            guarded=self._approval_files(),
        )

    def _approval_files(self) -> tuple[str, ...]:
        """The project files that decide who may approve: the settings (and `catalyst.toml`,
        which would win over `pyproject.toml` if a step made one) and the allowed signers."""
        files = ["catalyst.toml", posixpath.normpath(self.project.config.allowed_signers)]
        if self.project.config_file is not None:
            files.append(relative_to_root(self.project, str(self.project.config_file)))
        return tuple(dict.fromkeys(f for f in files if not f.startswith("../") and not os.path.isabs(f)))

    def inputs_env(self, values: dict[str, Any]) -> RunEnv:
        return RunEnv(Scope(), values, self.state_dir / "tmp", lambda: [])

    def default_renderer(self) -> Callable[[ir.Value], Any]:
        from catalyst_dsl.runtime.values.evaluate import materialize

        return lambda value, resolved: materialize(value, self.inputs_env(dict(resolved)))


#: The folders of the state directory that runs write into (runtime/state).
STATE_FOLDERS = ("locks", "views", "tmp", "history", "results", "step-cache")


def refuse_linked_state(project: Project, state_dir: Path) -> None:
    """RunAbort when the state directory leads out of the project through a link, or one of
    its folders is a link: a repository that commits `.xe/runs` (or `.xe/runs/locks`) as a
    symbolic link would otherwise have runs write snapshots, keys and locks wherever it
    points."""
    from catalyst_dsl.project.config import stays_inside

    where = project.config.state_dir.strip("/")  # as the settings name it, not where a link leads
    linked = None
    if not stays_inside(project.root, project.config.state_dir):
        linked = where
    else:
        linked = next((f"{where}/{n}" for n in STATE_FOLDERS if (state_dir / n).is_symlink()), None)
    if linked is not None:
        raise RunAbort(
            EXIT_INVALID,
            f"{linked} is a link that may lead out of the project; runs keep their state only in the "
            "project's own folders",
            help=f"remove the link (and {linked} from git, if a repository brought it); catalyst makes the "
            "folder itself",
        )
