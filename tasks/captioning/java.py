"""Finding Java and the jars that pycocoevalcap ships (we never vendor them: GPL/LGPL/AGPL).

Override with environment variables: VLBENCH_JAVA (the java executable; `none` behaves as if no
Java were installed, which is how the test suite is run "without Java" on a machine that has it),
VLBENCH_PTB_JAR, VLBENCH_METEOR_JAR, VLBENCH_SPICE_JAR. By default the jars are looked up inside the installed
pycocoevalcap package (found without importing it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from functools import cache
from pathlib import Path

# Locale-proof JVM flags: Meteor's Scanner would otherwise parse decimal commas (aac-metrics#9).
JAVA_LOCALE = ["-Duser.language=en", "-Duser.country=US", "-Dfile.encoding=UTF-8"]


class JavaUnavailable(RuntimeError):
    """Java or a jar is missing; the message says which and how to get it."""


JAVA_DISABLED = "none"


def java_disabled() -> bool:
    """VLBENCH_JAVA=none: act as if Java were absent (to check the no-Java install on any machine)."""
    return os.environ.get("VLBENCH_JAVA", "").strip().lower() == JAVA_DISABLED


def java_command() -> list[str]:
    if java_disabled():
        raise JavaUnavailable("no java: disabled by VLBENCH_JAVA=none")
    exe = os.environ.get("VLBENCH_JAVA") or shutil.which("java")
    if not exe or not Path(exe).exists():
        raise JavaUnavailable("no java executable on PATH (install a JRE, e.g. apt-get install default-jre-headless)")
    return [exe, *JAVA_LOCALE]


@cache
def pycocoevalcap_dir() -> Path | None:
    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _jar(env: str, relative: str, what: str) -> Path:
    override = os.environ.get(env)
    if override:
        p = Path(override)
        if not p.is_file():
            raise JavaUnavailable(f"{env}={override} is not a file")
        return p
    root = pycocoevalcap_dir()
    if root is None:
        raise JavaUnavailable(f"{what} not found: it comes with the captions extra, which is not installed "
                              f"(pip install 'vlbench[captions]'), or set {env}")
    p = root / relative
    if not p.is_file():
        raise JavaUnavailable(f"{what} not found at {p}; set {env}")
    return p


def ptb_jar() -> Path:
    return _jar("VLBENCH_PTB_JAR", "tokenizer/stanford-corenlp-3.4.1.jar", "the CoreNLP 3.4.1 PTB tokenizer jar")


def meteor_jar() -> Path:
    return _jar("VLBENCH_METEOR_JAR", "meteor/meteor-1.5.jar", "the Meteor 1.5 jar")


def spice_jar() -> Path:
    return _jar("VLBENCH_SPICE_JAR", "spice/spice-1.0.jar", "the SPICE 1.0 jar")
