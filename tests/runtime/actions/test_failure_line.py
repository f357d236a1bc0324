"""The line a failed command's error quotes (catalyst_dsl/runtime/actions/failure_line.py):
the one that says why, not the wrapper, the trace's frames or the blank lines after it."""

from __future__ import annotations

import pytest

from catalyst_dsl.runtime.actions.failure_line import failure_line

PYTHON = """\
Traceback (most recent call last):
  File "/tmp/app.py", line 3, in <module>
    main()
  File "/tmp/app.py", line 2, in main
    raise ValueError("the config has no name")
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ValueError: the config has no name
make: *** [Makefile:2: all] Error 1

"""

JAVA = """\
Exception in thread "main" java.lang.RuntimeException: could not start
\tat Main.main(Main.java:5)
Caused by: java.io.IOException: disk full
\tat Main.write(Main.java:9)
\t... 1 more
"""

NODE = """\
/tmp/t.js:1
throw new Error('boom')
^

Error: boom
    at Object.<anonymous> (/tmp/t.js:1:7)
    at Module._compile (node:internal/modules/cjs/loader:1105:14)

Node.js v18.19.0
"""

GO = """\
panic: no such table: users

goroutine 1 [running]:
main.main()
\t/tmp/app/main.go:8 +0x1d
exit status 2
"""

GCC = """\
main.c: In function 'main':
main.c:3:1: error: expected ';' before '}' token
    2 |   return 0
      |           ^
      |           ;
    3 | }
      | ~
make: *** [Makefile:2: all] Error 1
"""

RUST = """\
error[E0425]: cannot find value `x` in this scope
 --> src/main.rs:2:5
  |
2 |     x
  |     ^ not found in this scope

error: aborting due to 1 previous error

For more information about this error, try `rustc --explain E0425`.
error: could not compile `app` (bin "app") due to 1 previous error
"""

NPM = """\
npm ERR! code ELIFECYCLE
npm ERR! errno 1
npm ERR! app@1.0.0 test: `node t.js`
npm ERR! Exit status 1
npm ERR! A complete log of this run can be found in:
npm ERR!     /root/.npm/_logs/debug.log
"""

PYTEST = """\
FAILED tests/test_app.py::test_add - assert 3 == 4
========================= 1 failed, 2 passed in 0.05s =========================
"""


@pytest.mark.parametrize(
    ("output", "said"),
    [
        ("first\nthe last line\n", "the last line"),
        ("cannot open out/x.txt\n\n  \n", "cannot open out/x.txt"),
        ("\x1b[31merror:\x1b[0m no such file\n", "error: no such file"),
        (PYTHON, "ValueError: the config has no name"),
        (JAVA, "Caused by: java.io.IOException: disk full"),
        (NODE, "Error: boom"),
        (GO, "panic: no such table: users"),
        (GCC, "main.c:3:1: error: expected ';' before '}' token"),
        (RUST, "error[E0425]: cannot find value `x` in this scope"),
        (PYTEST, "FAILED tests/test_app.py::test_add - assert 3 == 4"),
        # Nothing but wrappers: the last line, as there is nothing better to say.
        (NPM, "npm ERR!     /root/.npm/_logs/debug.log"),
        ("make: *** [all] Error 2\n", "make: *** [all] Error 2"),
    ],
)
def test_the_line_that_says_why(output, said):
    assert failure_line(output) == said


def test_the_first_stream_with_a_line_is_read():
    assert failure_line("\n  \n", "on stdout\n") == "on stdout"
    assert failure_line("on stderr\n", "on stdout\n") == "on stderr"
    assert failure_line("", "") is None


def test_a_failed_bash_step_quotes_the_error_not_the_wrapper(project):
    project.playbook(
        "build",
        """
        name: build
        description: a recipe that fails as make reports it
        owner: Engineer
        steps:
          - name: compile
            bash: |
              echo 'cc: error: no input files' >&2
              echo 'make: *** [Makefile:2: all] Error 1' >&2
              echo >&2
              exit 2
        """,
    )
    result = project.run("build")
    assert result.exit_code == 2, result.output
    assert "exited with code 2: cc: error: no input files" in result.output
    assert "CommandFailed" in result.output
    assert "exited with code 2: cc: error: no input files" in project.snapshot()["error"]["message"]
