"""Plugins through entry points: good ones load, broken ones are reported by name."""

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf, WriteDecl
from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.ir.types import STRING, obj, opt
from catalyst_dsl.actions.plugins import ACTIONS, ADAPTERS, PluginAction, PluginProblem, Plugins


def _spec(name, **changes):
    fields = dict(
        name=name,
        group="plugins",
        summary="A plugin action.",
        config=obj(who=opt(STRING)),
        primary="who",
        result=obj(greeting=STRING),
        effect=Effect.PURE,
        what_if=WhatIf.RUN,
    )
    fields.update(changes)
    return ActionSpec(**fields)


def _run(ctx, config):
    return {"greeting": "hi"}


class FakeEntryPoint:
    """What Plugins uses of importlib.metadata.EntryPoint: name, value, dist, load()."""

    def __init__(self, name, loaded=None, *, error=None, dist="fake-plugins"):
        self.name = name
        self.value = f"fake_module:{name.upper()}"
        self.dist = SimpleNamespace(name=dist, version="1.0")
        self._loaded = loaded
        self._error = error
        self.loads = 0

    def load(self):
        self.loads += 1
        if self._error is not None:
            raise self._error
        return self._loaded


def _entry_points(**groups):
    calls = []

    def entry_points(*, group):
        calls.append(group)
        return list(groups.get(group.replace("catalyst.", ""), []))

    entry_points.calls = calls
    return entry_points


def _good(name="hello"):
    return FakeEntryPoint(name, SimpleNamespace(spec=_spec(name), run=_run))


def test_nothing_is_listed_or_imported_until_asked():
    good = _good()
    fn = _entry_points(actions=[good])
    plugins = Plugins(fn)
    assert fn.calls == [] and good.loads == 0
    assert plugins.action("hello").spec.name == "hello"
    plugins.actions()
    plugins.actions()
    assert good.loads == 1 and fn.calls == [ACTIONS]


def test_good_plugin_loads():
    actions = Plugins(_entry_points(actions=[_good()])).actions()
    assert list(actions) == ["hello"]
    action = actions["hello"]
    assert isinstance(action, PluginAction) and action.run is _run
    assert action.origin == "fake-plugins 1.0, hello = fake_module:HELLO"


def test_lookup_imports_only_the_named_plugin():
    hello, other = _good("hello"), _good("other")
    plugins = Plugins(_entry_points(actions=[hello, other]))
    assert plugins.action("hello") is not None
    assert plugins.action("missing") is None
    assert (hello.loads, other.loads) == (1, 0)


def test_broken_import_is_reported_by_name_and_the_good_one_still_loads():
    broken = FakeEntryPoint("broken", error=ImportError("No module named 'requests'"), dist="broken-dist")
    plugins = Plugins(_entry_points(actions=[broken, _good()]))
    assert list(plugins.actions()) == ["hello"]
    [problem] = plugins.problems()
    assert problem == PluginProblem(
        ACTIONS,
        "broken",
        "broken-dist 1.0, broken = fake_module:BROKEN",
        "failed to load: ImportError: No module named 'requests'",
    )
    assert str(problem).startswith("plugin 'broken' (broken-dist 1.0")


def test_any_exception_from_a_plugin_is_contained():
    class Exploding:
        @property
        def spec(self):
            raise ZeroDivisionError("oops")

    plugins = Plugins(_entry_points(actions=[FakeEntryPoint("boom", Exploding()), _good()]))
    assert list(plugins.actions()) == ["hello"]
    assert "ZeroDivisionError: oops" in plugins.problems()[0].message


@pytest.mark.parametrize(
    "loaded, message",
    [
        (SimpleNamespace(run=_run), "has no 'spec'; it needs an ActionSpec"),
        (SimpleNamespace(spec={"name": "hello"}, run=_run), "has a 'spec' of type dict"),
        (SimpleNamespace(spec=_spec("hello")), "has no callable 'run(ctx, config)'"),
        (SimpleNamespace(spec=_spec("hello"), run="not callable"), "has no callable 'run(ctx, config)'"),
    ],
)
def test_missing_spec_or_run(loaded, message):
    plugins = Plugins(_entry_points(actions=[FakeEntryPoint("hello", loaded)]))
    assert plugins.actions() == {}
    assert message in plugins.problems()[0].message


def test_spec_name_must_match_the_entry_point_name():
    plugins = Plugins(_entry_points(actions=[FakeEntryPoint("hello", SimpleNamespace(spec=_spec("greet"), run=_run))]))
    assert plugins.actions() == {}
    [problem] = plugins.problems()
    assert problem.name == "hello"
    assert "declares the action 'greet' but the entry point is named 'hello'" in problem.message


def test_shadowing_a_builtin_is_refused_without_importing_it():
    shadow = FakeEntryPoint("bash", SimpleNamespace(spec=_spec("bash"), run=_run))
    plugins = Plugins(_entry_points(actions=[shadow, _good()]))
    assert list(plugins.actions()) == ["hello"]
    assert shadow.loads == 0
    assert "'bash' is a built-in action" in plugins.problems()[0].message


def test_reserved_step_key_cannot_be_an_action():
    plugins = Plugins(
        _entry_points(actions=[FakeEntryPoint("timeout", SimpleNamespace(spec=_spec("timeout"), run=_run))])
    )
    assert plugins.actions() == {}
    assert "reserved step key" in plugins.problems()[0].message


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"primary": "whom"}, "the primary property 'whom' is not a config key (who)"),
        ({"writes": (WriteDecl("path", "file"),)}, "declares writes through 'path'"),
        ({"effect": "pure"}, "must be an Effect and a WhatIf"),
    ],
)
def test_inconsistent_spec_is_refused(changes, message):
    plugins = Plugins(
        _entry_points(actions=[FakeEntryPoint("hello", SimpleNamespace(spec=_spec("hello", **changes), run=_run))])
    )
    assert plugins.actions() == {}
    assert message in plugins.problems()[0].message


def test_builtin_specs_pass_the_plugin_consistency_rules():
    from catalyst_dsl.actions.plugins import _spec_problem

    assert [(s.name, _spec_problem(s)) for s in builtin_catalog().specs() if _spec_problem(s)] == []


def test_two_plugins_with_one_name():
    first, second = _good(), FakeEntryPoint("hello", SimpleNamespace(spec=_spec("hello"), run=_run), dist="other-dist")
    plugins = Plugins(_entry_points(actions=[first, second]))
    assert plugins.action("hello").origin.startswith("fake-plugins")
    assert second.loads == 0
    [problem] = plugins.problems()
    assert problem.origin.startswith("other-dist") and "also declared by fake-plugins 1.0" in problem.message


def test_listing_failure_is_a_problem_not_a_crash():
    def entry_points(*, group):
        raise ValueError("bad metadata")

    plugins = Plugins(entry_points)
    assert plugins.actions() == {} and plugins.adapters() == {}
    assert {p.group for p in plugins.problems()} == {ACTIONS, ADAPTERS}


def test_catalog_adds_plugin_specs_to_the_builtins():
    plugins = Plugins(_entry_points(actions=[_good()]))
    catalog = plugins.catalog(builtin_catalog())
    assert catalog.get("hello").summary == "A plugin action."
    assert "bash" in catalog and "hello" not in builtin_catalog()


def test_adapters():
    def factory(options):
        return SimpleNamespace(name="claude", invoke=lambda prompt, tools, options: iter(["hi"]))

    plugins = Plugins(
        _entry_points(
            adapters=[
                FakeEntryPoint("claude", factory),
                FakeEntryPoint("mock", factory),
                FakeEntryPoint("junk", 42),
                FakeEntryPoint("gone", error=ModuleNotFoundError("No module named 'sdk'")),
            ]
        )
    )
    assert plugins.adapters() == {"claude": factory}
    assert plugins.adapter("claude") is factory
    messages = {p.name: p.message for p in plugins.problems()}
    assert set(messages) == {"mock", "junk", "gone"}
    assert "built-in AI adapter" in messages["mock"]
    assert "not a factory" in messages["junk"]


# --- a real installed distribution ------------------------------------------------------------


def test_installed_wheel_registers_its_action(tmp_path, plugin_wheel):
    wheel = plugin_wheel.build_wheel(tmp_path / "dist")
    target = tmp_path / "site"
    plugin_wheel.install_wheel(wheel, target)
    code = textwrap.dedent(
        """\
        from catalyst_dsl.actions.plugins import Plugins

        plugins = Plugins()
        actions = plugins.actions()
        print(sorted(actions))
        print(actions["hello"].origin)
        print(actions["hello"].run(None, {"who": "tests"}))
        print([p.name for p in plugins.problems()])
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=plugin_wheel.plugin_env(target)
    )
    assert result.returncode == 0, result.stderr
    names, origin, greeting, problems = result.stdout.splitlines()
    assert "'hello'" in names
    assert origin == "catalyst_hello_plugin 0.1, hello = catalyst_hello_plugin:ACTION"
    assert greeting == "{'greeting': 'hello, tests'}"
    assert "hello" not in problems  # other installed plugins are not this test's business


def test_a_function_named_like_a_plugin_action_says_whose_name_it_is():
    from catalyst_dsl.actions.catalog import Catalog
    from catalyst_dsl.compiler import compile_bytes

    catalog = Catalog(builtin_catalog().specs(), fallback=lambda name: _spec(name) if name == "hello" else None)
    text = (
        b"name: f\ndescription: d\nowner: Engineer\n"
        b"steps:\n  - function: hello\n    steps:\n      - display: hi\n"
        b"  - function: display\n    steps:\n      - display: hi\n"
    )
    found = {d.message for d in compile_bytes(text, "f.yaml", catalog).diagnostics if d.code == "C410"}
    assert found == {
        "the function 'hello' has the name of an action an installed plugin provides",
        "the function 'display' has the name of a built-in action",
    }
