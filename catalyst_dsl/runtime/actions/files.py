"""File and JSON actions. Writes and deletes go through the gateway; reads stay in the project."""

from __future__ import annotations

import fnmatch
import json
import os

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import FileTooLarge as _TooLarge
from catalyst_dsl.runtime.effects.beneath import is_within
from catalyst_dsl.runtime.simulation.recording import ContentNotShown

#: Files larger than this are not read into a variable (they would also swell the state).
MAX_READ_BYTES = 50 * 1024 * 1024


def _text(value: object) -> str:
    from catalyst_dsl.runtime.values.evaluate import to_text

    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    return "" if value is None else to_text(value)


def _read_bytes(ctx: ActionContext, written: str) -> bytes:
    target = ctx.read_target(written)
    try:
        data = ctx.gateway.read_file(target, MAX_READ_BYTES)
        if data is None:
            raise FileNotFoundError(written)
        return data
    except _TooLarge:
        raise StepError("FileTooLarge", f"'{written}' is larger than {MAX_READ_BYTES // 1024 // 1024} MiB") from None
    except FileNotFoundError:
        raise StepError(
            "FileNotFound", f"'{written}' does not exist", guidance="check the path, or test it first with file-exists"
        ) from None
    except IsADirectoryError:
        raise StepError("FileNotFound", f"'{written}' is a directory, not a file") from None
    except OSError as error:
        raise StepError("FileReadError", f"cannot read '{written}': {error.strerror or error}") from None


def _decode(data: bytes, written: str, encoding: str | None) -> str:
    try:
        return data.decode(encoding or "utf-8")
    except (UnicodeDecodeError, LookupError) as error:
        raise StepError("FileReadError", f"cannot decode '{written}' as {encoding or 'utf-8'}: {error}") from None


def file_read(ctx: ActionContext, config: dict) -> str:
    return _decode(_read_bytes(ctx, config["path"]), config["path"], config.get("encoding"))


def file_exists(ctx: ActionContext, config: dict) -> bool:
    try:
        return ctx.gateway.read_file(ctx.read_target(config["path"]), MAX_READ_BYTES) is not None
    except (_TooLarge, ContentNotShown):
        return True  # it exists; it is only too large to read, or a what-if does not show it
    except (StepError, OSError):
        return False  # outside the project, a directory, unreadable: not a file we can use


def file_list(ctx: ActionContext, config: dict) -> list[str]:
    target = ctx.read_target(config["path"])
    base = target.path
    # A what-if lists the files as its earlier steps would have left them.
    added, removed = ctx.gateway.performer.listing(base)
    try:
        on_disk = [base / name for name in ctx.gateway.list_files(target)]
    except (FileNotFoundError, NotADirectoryError):
        if not added:
            raise StepError("FileNotFound", f"'{config['path']}' is not a directory") from None
        on_disk = []
    # A what-if lists no name from inside a `.git` directory (runtime/effects/tracked.py).
    rules = getattr(ctx.gateway.performer, "files", None)
    if rules is not None:
        on_disk = [full for full in on_disk if rules.refusal(full) is None]
    pattern = config.get("pattern") or "*"
    relative_to = config.get("relativeTo") or "root"
    found = []
    for full in sorted({*on_disk, *added} - removed):
        inside = full.relative_to(base).as_posix()
        if not (fnmatch.fnmatchcase(inside, pattern) or fnmatch.fnmatchcase(full.name, pattern)):
            continue
        if relative_to == "absolute":
            found.append(str(full))
        elif relative_to == "cwd":
            found.append(os.path.relpath(full))
        elif is_within(full, ctx.gateway.real_scratch):
            # Scratch files keep their protocol name: the scratch directory is the run's own.
            found.append("temp://" + full.relative_to(ctx.gateway.real_scratch).as_posix())
        elif config["path"].startswith("catalyst://"):
            # So do resources listed as resources: they may be outside the project.
            found.append("catalyst://" + full.relative_to(ctx.gateway.real_resources).as_posix())
        else:
            found.append(full.relative_to(ctx.gateway.real_root).as_posix())
    return found


def file_write(ctx: ActionContext, config: dict) -> dict:
    content = _text(config.get("content"))
    for old, new in (config.get("replace") or {}).items():
        content = content.replace(str(old), _text(new))
    front = config.get("frontMatter")
    if front and config["path"].endswith(".md"):
        from catalyst_dsl.syntax.pyyaml import (
            yaml,
        )  # only front matter is YAML: a run that writes none does not import it

        content = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + content
    data = content.encode(config.get("encoding") or "utf-8")
    target = ctx.gateway.write_file(config["path"], data)
    return {"path": target.relative or config["path"], "bytesWritten": len(data)}


def file_delete(ctx: ActionContext, config: dict) -> bool:
    return ctx.gateway.delete_file(config["path"])


def json_read(ctx: ActionContext, config: dict):
    text = _decode(_read_bytes(ctx, config["path"]), config["path"], None)
    try:
        return json.loads(text)
    except ValueError as error:
        raise StepError("JsonParseError", f"'{config['path']}' is not valid JSON: {error}") from None


def json_write(ctx: ActionContext, config: dict) -> dict:
    pretty = config.get("pretty", True)
    text = json.dumps(config.get("value"), indent=2 if pretty else None, ensure_ascii=False) + "\n"
    data = text.encode("utf-8")
    target = ctx.gateway.write_file(config["path"], data)
    return {"path": target.relative or config["path"], "bytesWritten": len(data)}


def gitignore_edit(ctx: ActionContext, config: dict) -> dict:
    written = config["path"]
    try:
        before = _decode(_read_bytes(ctx, written), written, None)
    except StepError as error:
        if error.code != "FileNotFound":
            raise
        before = ""
    lines = before.splitlines()
    header = f"# {config.get('header') or 'catalyst'}"
    remove = set(config.get("remove") or ())
    lines = [line for line in lines if line not in remove]
    missing = [p for p in (config.get("add") or ()) if p not in lines]
    if missing:
        if header in lines:
            at = lines.index(header) + 1
            while at < len(lines) and lines[at].strip() and not lines[at].startswith("# "):
                at += 1
            lines[at:at] = missing
        else:
            if lines and lines[-1].strip():
                lines.append("")
            lines += [header, *missing]
    after = "\n".join(lines) + "\n" if lines else ""
    changed = after != before
    data = after.encode("utf-8")
    if changed:
        ctx.gateway.write_file(written, data)
    return {"path": written, "bytesWritten": len(data) if changed else 0, "changed": changed}


ACTIONS = {
    "file-read": file_read,
    "file-exists": file_exists,
    "file-list": file_list,
    "file-write": file_write,
    "file-delete": file_delete,
    "json-read": json_read,
    "json-write": json_write,
    "gitignore-edit": gitignore_edit,
}
