"""Real servers for tests: the annotation app as a subprocess (`tealeaves annotate serve`), a
throwaway PostgreSQL cluster (initdb on a free local port), and headless Chromium."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

from tealeaves.annotate.simulate import AppServer, free_port

__all__ = [
    "AppServer",
    "free_port",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "postgres_bin",
    "postgres_cluster",
    "create_database",
]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


def postgres_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL server on a free port; yields a SQLAlchemy URL prefix
    (append a database name). As root, the server runs as the `postgres` system user."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed")
    root = tempfile.mkdtemp(prefix="tl-pg-")
    data, sock = os.path.join(root, "data"), os.path.join(root, "sock")
    os.makedirs(sock)
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    subprocess.run(
        [*prefix, f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *prefix,
            f"{bindir}/pg_ctl",
            "-D",
            data,
            "-w",
            "-l",
            os.path.join(root, "log"),
            "-o",
            f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=on",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*prefix, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


def create_database(prefix: str, name: str) -> str:
    import psycopg

    dsn = prefix.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{prefix}/{name}"
