"""A throwaway PostgreSQL server for the tests: initdb + pg_ctl in a temporary directory.

Runs the server as the ``postgres`` system user when the tests run as root (initdb refuses root).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if not initdb or not pg_ctl:
            raise FileNotFoundError("PostgreSQL server binaries (initdb, pg_ctl) not found")
        self.initdb, self.pg_ctl = initdb, pg_ctl
        self.dir = Path(tempfile.mkdtemp(prefix="ib-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.dir.chmod(0o755)
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True)

    def start(self) -> PostgresServer:
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                  "--no-sync", "--locale=C")  # fmt: skip
        self._run(
            self.pg_ctl, "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
            "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -F "
                  "-c max_connections=200 -c synchronous_commit=off",
            "start",
        )  # fmt: skip
        return self

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def create_db(self, name: str) -> str:
        import asyncio

        import asyncpg  # type: ignore[import-untyped]

        async def go() -> None:
            conn = await asyncpg.connect(host="127.0.0.1", port=self.port, user="postgres")
            await conn.execute(f'CREATE DATABASE "{name}"')
            await conn.close()

        asyncio.run(go())
        return self.url(name)

    def pause(self) -> None:
        """Stop the server (fast shutdown) — for outage tests."""
        self._run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        self._run(
            self.pg_ctl, "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
            "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -F "
                  "-c max_connections=200 -c synchronous_commit=off",
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except subprocess.CalledProcessError:
            pass
        time.sleep(0.1)
        shutil.rmtree(self.dir, ignore_errors=True)


def pg_rows(url: str, sql: str) -> list[tuple[object, ...]]:
    """Run one query on a PostgreSQL database (what the bot stored)."""
    import asyncio

    import asyncpg

    async def go() -> list[tuple[object, ...]]:
        conn = await asyncpg.connect(url)
        try:
            return [tuple(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()

    return asyncio.run(go())
