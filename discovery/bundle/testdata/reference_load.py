#!/usr/bin/env python3
"""Load bundle files with amplifier-foundation's own loader, offline.

The differential test of discovery/bundle runs this script. It makes the
reference library importable without its runtime (a stand-in for
amplifier_core), refuses every fetch (git, sockets), loads each bundle
file it is given with BundleRegistry._load_single, as the CLI does (with
the CLI's well-known names registered first), and prints, for each file,
the mount plan, the context, what the library logged and the fetches it
tried, as one JSON document on stdout.

Usage:
    reference_load.py --src DIR --home DIR < request.json

DIR of --src holds the reference's source (amplifier_foundation/ in it).
--home is AMPLIFIER_HOME: its cache/ holds the git checkouts, laid out as
the runtime lays them. The request is JSON:

    {"well_known": {"name": "uri", ...},
     "files": [{"path": "/abs/bundle.md", "cwd": "/abs"}, ...],
     "repeat": 1}

Nothing here fetches: a git clone or a socket connection raises, and the
URL is reported under "fetch_refused" of the file that asked for it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import time
import types
from pathlib import Path


class _Anything(types.ModuleType):
    """A module whose every attribute is a harmless class."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        value = type(name, (Exception,), {})
        setattr(self, name, value)
        return value


def stub_amplifier_core() -> None:
    """Stand in for amplifier_core: loading bundles needs none of it."""
    for name in (
        "amplifier_core",
        "amplifier_core.models",
        "amplifier_core.module_sources",
        "amplifier_core.message_models",
        "amplifier_core._engine",
        "amplifier_core._grpc_gen",
    ):
        sys.modules.setdefault(name, _Anything(name))


class FetchRefused(Exception):
    """Raised in place of every network access."""


def refuse_network(refused: list[str]) -> None:
    def no_connect(self, *args, **kwargs):
        refused.append(f"socket:{args!r}")
        raise FetchRefused(f"reference_load.py: network refused: {args!r}")

    socket.socket.connect = no_connect  # type: ignore[method-assign]
    socket.create_connection = lambda *a, **k: no_connect(None, *a)  # type: ignore[assignment]

    real_run = subprocess.run
    real_popen = subprocess.Popen

    def guard(args):
        argv = args if isinstance(args, (list, tuple)) else [str(args)]
        if argv and "git" in os.path.basename(str(argv[0])):
            url = next((a for a in argv if "://" in str(a)), " ".join(map(str, argv)))
            refused.append(str(url))
            raise FetchRefused(f"reference_load.py: fetch refused: {url}")

    def run(args, *a, **k):
        guard(args)
        return real_run(args, *a, **k)

    class Popen(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, args, *a, **k):
            guard(args)
            super().__init__(args, *a, **k)

    subprocess.run = run  # type: ignore[assignment]
    subprocess.Popen = Popen  # type: ignore[misc]


def keep_cache(removed: list[str]) -> None:
    """The runtime removes a checkout it finds incomplete before cloning it
    again; here the clone is refused, so the checkout is kept for the next
    file (and the removal reported), which keeps every load independent."""
    import amplifier_foundation.sources.git as git

    def no_rmtree(path, *args, **kwargs):
        removed.append(str(path))

    git.rmtree_robust = no_rmtree


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.INFO:
            return
        self.records.append({"level": record.levelname.lower(), "message": record.getMessage()})


def plain(value):
    """JSON-ready copy of a mount-plan value."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


async def load_one(path: str, well_known: dict[str, str], home: Path, capture: Capture, refused: list[str]) -> dict:
    from amplifier_foundation.registry import BundleRegistry

    (home / "registry.json").unlink(missing_ok=True)
    capture.records = []
    refused.clear()
    registry = BundleRegistry(home=home)
    registry.register(dict(well_known))
    out: dict = {"path": path}
    start = time.process_time()
    try:
        bundle = await registry._load_single(path, auto_register=True, _explicitly_requested=True)
    except Exception as exc:  # the reference refuses the file itself
        out["ok"] = False
        out["error"] = f"{type(exc).__name__}: {exc}"
    else:
        out["ok"] = True
        out["name"] = bundle.name
        out["mount_plan"] = plain(bundle.to_mount_plan())
        out["context"] = {k: str(v) for k, v in bundle.context.items()}
        out["pending_context"] = dict(bundle._pending_context)
        out["source_base_paths"] = {k: str(v) for k, v in bundle.source_base_paths.items()}
        out["has_instruction"] = bool(bundle.instruction)
    out["cpu_seconds"] = time.process_time() - start
    out["logs"] = list(capture.records)
    out["fetch_refused"] = list(refused)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True)
    parser.add_argument("--home", required=True)
    args = parser.parse_args()
    request = json.load(sys.stdin)

    home = Path(args.home).resolve()
    os.environ["AMPLIFIER_HOME"] = str(home)
    sys.path.insert(0, str(Path(args.src).resolve()))
    stub_amplifier_core()
    refused: list[str] = []
    refuse_network(refused)

    capture = Capture()
    root = logging.getLogger("amplifier_foundation")
    root.setLevel(logging.DEBUG)
    root.addHandler(capture)
    root.propagate = False

    import_start = time.process_time()
    import amplifier_foundation.registry  # noqa: F401
    import_cpu = time.process_time() - import_start
    keep_cache(refused)

    results = []
    repeat = max(1, int(request.get("repeat", 1)))
    for item in request["files"]:
        for _ in range(repeat):
            os.chdir(item.get("cwd") or os.path.dirname(item["path"]))
            result = asyncio.run(load_one(item["path"], request.get("well_known", {}), home, capture, refused))
        results.append(result)
    (home / "registry.json").unlink(missing_ok=True)
    json.dump({"import_cpu_seconds": import_cpu, "results": results}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
