"""A stand-in for kai's agents, run by the `command` AI adapter in kai run tests.

It reads the prompt on stdin, takes the slash command from its first line, logs that line
to `calls.txt` in the folder `agent-plan.json` names, and does what the plan says for
the command's Nth call (the last entry repeats): write files, sleep, fail.
"""

import json
import os
import sys
import time

prompt = sys.stdin.read()
first = prompt.splitlines()[0] if prompt else ""
command = first.split(" ", 1)[0]
with open("agent-plan.json", encoding="utf-8") as handle:
    plan = json.load(handle)
calls = os.path.join(plan["log"], "calls.txt")
with open(calls, "a", encoding="utf-8") as handle:
    handle.write(first + "\n")
with open(calls, encoding="utf-8") as handle:
    n = sum(1 for line in handle if line.split(" ", 1)[0].strip() == command)
acts = plan["commands"].get(command) or [{}]
act = acts[min(n, len(acts)) - 1]
for path, text in act.get("write", {}).items():
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
if act.get("sleep"):
    time.sleep(act["sleep"])
if act.get("fail"):
    print("the agent gave up", file=sys.stderr)
    sys.exit(1)
print(f"{command} done")
