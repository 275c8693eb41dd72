"""Locked dependencies (issue 21, item 8): the lock files pin every package
with hashes and agree with the direct lists; the audit script says what it did."""
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCKS = {
    "requirements.txt": "requirements.lock",
    "requirements-build.txt": "requirements-build.lock",
    "requirements-test.txt": "requirements-test.lock",
}
TEST_TOOLS = {"pytest", "hypothesis", "krippendorff", "playwright", "requests",
              "websocket-client", "pip-tools", "pip-audit", "pyflakes"}


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def direct(path):
    """{name: version} of a direct list's requirements (all pinned with ==)."""
    pins = {}
    for line in (ROOT / path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]+\])?==([^\s;]+)", line)
        assert m, f"{path}: not pinned with ==: {line!r}"
        pins[canonical(m[1])] = m[2]
    return pins


def locked(path):
    """{name: (version, number of hashes)} of a lock file."""
    entries = {}
    text = (ROOT / path).read_text()
    # A requirement and its continuation lines form one entry.
    for entry in re.split(r"\n(?=[^\s#])", text):
        lines = [l for l in entry.splitlines() if not l.lstrip().startswith("#")]
        if not lines:
            continue
        body = " ".join(l.rstrip("\\").strip() for l in lines).strip()
        m = re.match(r"([A-Za-z0-9_.-]+)==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)$", body)
        assert m, f"{path}: an entry is not name==version with sha256 hashes: {body[:120]!r}"
        entries[canonical(m[1])] = (m[2], m[3].count("--hash"))
    return entries


@pytest.mark.parametrize("source,lock", LOCKS.items())
def test_every_lock_entry_is_pinned_with_hashes(source, lock):
    entries = locked(lock)
    assert entries and all(n >= 1 for _, n in entries.values())


@pytest.mark.parametrize("source,lock", LOCKS.items())
def test_every_direct_requirement_is_locked_at_its_version(source, lock):
    entries = locked(lock)
    for name, version in direct(source).items():
        assert name in entries, f"{name} of {source} missing from {lock}"
        assert entries[name][0] == version, f"{name}: {source} says {version}, {lock} {entries[name][0]}"


def test_the_locks_agree_on_shared_packages():
    seen = {}
    for lock in LOCKS.values():
        for name, (version, _) in locked(lock).items():
            assert seen.setdefault(name, (version, lock))[0] == version, (
                f"{name}: {seen[name][1]} has {seen[name][0]}, {lock} has {version}")


def test_runtime_list_has_no_test_tools():
    assert not TEST_TOOLS & set(direct("requirements.txt"))
    assert not TEST_TOOLS & set(locked("requirements.lock"))


def test_runtime_lock_holds_nothing_the_runtime_list_does_not_need():
    """Every runtime lock entry is a direct requirement or cites a reason ("via")."""
    text = (ROOT / "requirements.lock").read_text()
    for entry in re.split(r"\n(?=[^\s#])", text)[1:]:
        assert "# via" in entry, entry[:80]
        assert "requirements-test" not in entry


def test_makefile_installs_with_hash_checking():
    makefile = (ROOT / "Makefile").read_text()
    installs = [l.strip() for l in makefile.splitlines() if "pip install" in l]
    assert installs and all("--require-hashes" in l and ".lock" in l for l in installs), installs
    assert "requirements.txt" not in " ".join(installs)


def fake_pip_audit(tmp_path, output, rc):
    script = tmp_path / "pip-audit"
    script.write_text(f"#!/bin/sh\ncat <<'OUT'\n{output}\nOUT\nexit {rc}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.mark.parametrize("output,rc,status,says", [
    ("No known vulnerabilities found", 0, 0, "no known vulnerabilities"),
    ("Found 2 known vulnerabilities in 1 package\nName Version ID\nflask 0.1 PYSEC-1", 1, 1,
     "KNOWN VULNERABILITIES FOUND"),
    ("ERROR:pip_audit._cli:flask: Dependency not found on PyPI and could not be audited", 1, 0,
     "NOT RUN"),
    ("ERROR: Connection refused", 1, 0, "NOT RUN"),
])
def test_audit_says_what_it_did(tmp_path, output, rc, status, says):
    env = dict(os.environ, PIP_AUDIT=str(fake_pip_audit(tmp_path, output, rc)))
    done = subprocess.run(["bash", str(ROOT / "scripts" / "audit.sh")], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == status, done.stdout + done.stderr
    assert says in done.stdout


def test_the_vendored_chart_js_is_the_pinned_one():
    """static/js/vendor/chart.umd.min.js is Chart.js at package.json's pin,
    byte for byte the npm package's file when node_modules is there
    (`make vendor` copies it)."""
    import json

    pin = json.loads((ROOT / "package.json").read_text())["dependencies"]["chart.js"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pin), f"chart.js is not pinned to one version: {pin}"
    vendored = ROOT / "static" / "js" / "vendor" / "chart.umd.min.js"
    assert f"Chart.js v{pin}\n" in vendored.read_text()[:200]
    assert (ROOT / "static" / "js" / "vendor" / "chart.LICENSE").read_text().startswith("The MIT License")
    installed = ROOT / "node_modules" / "chart.js" / "dist" / "chart.umd.min.js"
    if installed.exists():
        assert installed.read_bytes() == vendored.read_bytes()
