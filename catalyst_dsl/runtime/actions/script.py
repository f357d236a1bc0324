"""`script` (JavaScript run with node) and `powershell` (run with pwsh).

`script` runs the step's `code` as the body of an async function, so `await` works and
`return x` makes x the step's value. Two functions reach the playbook's variables:

* `get(path)` reads a snapshot of the variables visible to the step, taken when it
  starts: `get('name')`, `get('result.items.0')`, `get('list.length')`, undefined when
  absent (the same dotted paths as `get()` in expressions). Values are copies.
* `set(name, value)` sets a variable once the step succeeds; later `get(name)` calls in
  the same script see the new value. Values must be JSON (undefined becomes null).

`require` is there too, resolving from the working directory. `console.log` goes to
the log like any program's output. The result is `{"result": <returned value>, "set":
{name: value, …}}`; the interpreter applies `set` with `apply_set`, and a named step's
value is the returned value alone (`{{name}}`, `get('name')`), as in the original engine.
When the script finishes, node stops even if timers are still pending.

Code and variables go to node on stdin, never on the command line. The outcome comes
back on one stdout line behind a marker with a random token per run, which the script
cannot guess; that line is not shown in the log.

Failures: `ScriptError` for a syntax error, an uncaught exception, a value that is not
JSON, or node ending before the script finished (`process.exit`, a crash);
`StepTimeout` after the step's timeout; `ActionUnavailable` without node.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.actions.process import _run
from catalyst_dsl.runtime.errors import StepError

#: The program node runs (`node -e`): reads the job from stdin, runs the code, reports.
WRAPPER = r"""
'use strict';
const vm = require('vm');
const own = (value, key) => Object.prototype.hasOwnProperty.call(value, key);
const copy = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (part) => { input += part; });
process.stdin.on('end', () => run(JSON.parse(input)));

function describe(error) {
  if (!(error instanceof Error)) {
    let shown;
    try { shown = JSON.stringify(error); } catch (_) { shown = undefined; }
    return { name: 'Error', message: 'the script threw a value that is not an Error: ' + (shown === undefined ? String(error) : shown) };
  }
  const stack = String(error.stack || '');
  const at = /(script\.js:\d+(?::\d+)?)/.exec(stack);
  return { name: error.name, message: error.message, location: at ? at[1] : null, stack: stack.split('\n').slice(0, 12).join('\n') };
}

function run(job) {
  const variables = job.variables;
  const changes = {};
  const finish = (report, code) => {
    process.stdout.write(job.marker + JSON.stringify(report) + '\n', () => process.exit(code));
  };
  const get = (path) => {
    const [root, ...segments] = String(path).split('.');
    if (!own(variables, root)) return undefined;
    let value = variables[root];
    for (const segment of segments) {
      if ((Array.isArray(value) || typeof value === 'string') && segment === 'length') {
        value = value.length;
      } else if (Array.isArray(value) && /^\d+$/.test(segment)) {
        value = value[Number(segment)];
      } else if (value !== null && typeof value === 'object' && !Array.isArray(value) && own(value, segment)) {
        value = value[segment];
      } else {
        return undefined;
      }
    }
    return copy(value);
  };
  const set = (name, value) => {
    if (typeof name !== 'string' || name === '' || name.includes('.')) {
      throw new TypeError('set(name, value): name must be a variable name (text without dots), not ' + JSON.stringify(name));
    }
    let text;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw new TypeError('set(' + JSON.stringify(name) + ', value): the value cannot be turned into JSON: ' + error.message);
    }
    const plain = text === undefined ? null : JSON.parse(text);
    changes[name] = plain;
    variables[name] = plain;
    return value;
  };
  let body;
  try {
    const source = '(async function (get, set, require) {\n' + job.code + '\n})';
    body = new vm.Script(source, { filename: 'script.js', lineOffset: -1 }).runInThisContext();
  } catch (error) {
    return finish({ ok: false, error: describe(error), set: changes }, 1);
  }
  body(get, set, require).then((value) => {
    let text;
    try {
      text = JSON.stringify(value === undefined ? null : value);
    } catch (error) {
      return finish({ ok: false, error: { name: 'TypeError', message: 'the returned value cannot be turned into JSON: ' + error.message }, set: changes }, 1);
    }
    finish({ ok: true, result: text === undefined ? null : JSON.parse(text), set: changes }, 0);
  }, (error) => finish({ ok: false, error: describe(error), set: changes }, 1));
}
"""  # noqa: E501 (node's stack traces quote this program's line numbers: its lines are kept as they are)

#: How much of node's stderr an error message quotes.
STDERR_TAIL_LINES = 15


def script(ctx: ActionContext, config: dict) -> dict:
    code = config.get("code")
    if not isinstance(code, str):
        raise StepError("InvalidConfig", "`script` needs the JavaScript to run in `code`")
    env = {str(key): str(value) for key, value in (config.get("env") or {}).items()}
    outcome, reports = run_javascript(
        ctx.gateway,
        ctx.program("node"),
        code,
        _variables(ctx),
        declared_writes=ctx.writes,
        cwd=config.get("cwd"),
        env=env,
        timeout=ctx.remaining(),
        on_output=ctx.output,
    )
    if outcome.timed_out:
        raise StepError("StepTimeout", f"the script was stopped after the step's timeout of {ctx.timeout:g}s")
    return outcome_of(outcome, reports)


def run_javascript(
    gateway,
    node: str,
    code: str,
    variables: Mapping[str, Any],
    *,
    declared_writes,
    cwd: str | None,
    env: Mapping[str, str],
    timeout: float | None,
    on_output: Callable[[str, str], None],
):
    """Run `code` with node through the gateway, confined like every step's program: the
    code and the variables `get()` reads go on stdin as JSON, so no value is ever part of
    the code. (the process's outcome, the reports it wrote behind its marker)."""
    import secrets  # here: the interpreter imports this module for every run and what-if

    marker = f"\x1e__catalyst_script_{secrets.token_hex(12)}__ "
    job = json.dumps(
        {"code": code, "variables": _plain(variables), "marker": marker}, ensure_ascii=False, allow_nan=False
    )
    reports: list[str] = []

    def output(stream: str, line: str) -> None:
        if stream == "stdout":
            at = line.find(marker)
            if at >= 0:
                reports.append(line[at + len(marker) :])
                line = line[:at]  # output the script left without a newline
                if not line:
                    return
        on_output(stream, line)

    outcome = gateway.run_process(
        [node, "-e", WRAPPER],
        declared_writes=declared_writes,
        cwd=cwd,
        env=env,
        timeout=timeout,
        on_output=output,
        stdin=job,
    )
    return outcome, reports


def outcome_of(outcome, reports: list[str]) -> dict:
    """The script's result and `set` values from what node reported, or the ScriptError that says why not."""
    if not reports:
        tail = "\n".join(outcome.stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
        raise StepError(
            "ScriptError",
            f"node exited with code {outcome.exit_code} before the script finished"
            + (f":\n{tail}" if tail else " (did it call process.exit?)"),
            metadata={"exitCode": outcome.exit_code, "stderr": outcome.stderr},
            guidance="return from the script instead of calling process.exit; await the promises it starts",
        )
    try:
        report = json.loads(reports[-1])
    except ValueError:
        raise StepError("ScriptError", "the script's outcome could not be read back from node") from None
    if not report.get("ok"):
        error = report.get("error") or {}
        where = f" at {error['location']}" if error.get("location") else ""
        raise StepError(
            "ScriptError",
            f"the script failed{where}: {error.get('name') or 'Error'}: {error.get('message')}",
            metadata={"error": error, "set": report.get("set") or {}},
            guidance="script.js lines are the lines of the step's code",
        )
    return {"result": report.get("result"), "set": report.get("set") or {}}


def _variables(ctx: ActionContext) -> Mapping[str, Any]:
    """The variables the step sees, from the context's `variables` hook (a mapping or a
    function returning one); none when the interpreter gives no such hook."""
    source = getattr(ctx, "variables", None)
    if source is None:
        return {}
    values = source() if callable(source) else source
    return values if isinstance(values, Mapping) else {}


def _plain(value: Any) -> Any:
    """`value` as JSON can hold it: NaN and infinities as null, unknown objects left out
    of mappings (None elsewhere), so one odd value never stops a script from starting."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        plain = {}
        for key, item in value.items():
            if item is None or isinstance(item, (str, bool, int, float, list, tuple, Mapping)):
                plain[str(key)] = _plain(item)
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return None


def visible_variables(scope, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What `get()` can read in a script: the playbook's inputs, then the variables of each
    scope from the outermost to the step's own (an inner name hides an outer one), as
    expressions resolve names. `scope` is a `runtime.scope.Scope` (values, parent)."""
    chain = []
    while scope is not None:
        chain.append(scope.values)
        scope = scope.parent
    visible: dict[str, Any] = {"inputs": dict(inputs), **inputs}
    for values in reversed(chain):
        visible.update(values)
    return visible


def apply_set(assign: Callable[[str, Any], None], result: Any) -> None:
    """Apply a `script` result's `set` values with `assign(name, value)` (`Scope.assign`:
    updates the variable where it is defined, else defines it in the step's scope)."""
    changes = result.get("set") if isinstance(result, dict) else None
    if isinstance(changes, dict):
        for name, value in changes.items():
            assign(str(name), value)


def powershell(ctx: ActionContext, config: dict) -> dict:
    """The step's `script` run by `pwsh -File` from the run's scratch space.

    A first line sets `$ErrorActionPreference = 'Stop'` (and makes a failing native
    program an error on PowerShell 7.3+), as `bash` runs with `-e`: line numbers in
    PowerShell's messages are one more than in the step's script.
    """
    pwsh = ctx.program("pwsh")
    text = config.get("script")
    if not isinstance(text, str):
        raise StepError("InvalidConfig", "`powershell` needs the script to run in `script`")
    prelude = "$ErrorActionPreference = 'Stop'; $PSNativeCommandUseErrorActionPreference = $true\n"
    import secrets

    written = f"temp://powershell/{secrets.token_hex(8)}.ps1"
    # Not synced: only this step's program reads it, and a resume writes it anew.
    with ctx.gateway.script(written, (prelude + text).encode("utf-8")) as target:
        argv = [
            pwsh,
            "-NoLogo",
            "-NoProfile",
            "-NonInteractive",
            "-ExecutionPolicy",
            "Bypass",
            "-File",
            str(target.path),
        ]
        return _run(ctx, argv, config)


ACTIONS = {"script": script, "powershell": powershell}
