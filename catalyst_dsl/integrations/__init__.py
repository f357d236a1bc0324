"""Where a dialect meets the run-time: the files a dialect's own tools keep about runs.

The dialects (catalyst_dsl/dialects/) only read playbooks into the IR and never touch the
run-time. What a foreign tool expects beside a run lives here, above both: kai's session
files and `catalyst kai init`'s folder (kai_sessions, kai_view, kai_init), and a cleo run
exported as cleo's task database rows (cleo_export).
"""
