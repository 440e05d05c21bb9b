"""Simulated hosts: several "machines" on this one, as Linux namespaces, for multi-host cliques and their tests.

    python -m mlutools.hosts up 2 --state /tmp/hosts.json     # two hosts, until `down`
    python -m mlutools.hosts down --state /tmp/hosts.json
    with SimulatedHosts(2) as hosts: hosts.run(0, ["python", "prog.py"])

Each host is a process holding its own network, mount, UTS and IPC namespaces: its own hostname (`mlusim-host<k>`),
its own /dev/shm (a fresh tmpfs) and System V IPC, so shared memory cannot leak between hosts, its own /etc/hosts
(naming every host) and one interface, `eth0`, with the address 10.<net>.0.<k+1>/24, plugged into a bridge that
lives in a namespace of its own (the switch). Nothing is configured in this machine's own namespaces: the veth pairs are created and moved away at once, and everything disappears with
the holder processes.

`launcher` is an ssh stand-in for MPI's process managers (`mpiexec -launcher ssh -launcher-exec <launcher>`): hydra
runs `<launcher> -x <host> <command>`, which runs the command inside that host's namespaces.
Making namespaces needs root (or user namespaces) and the `unshare`, `nsenter` and `ip` tools: `available()` says
whether this machine can, and why not.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

HOSTNAME_PREFIX = "mlusim-host"
STATE_ENV = "MLUSIM_HOSTS_STATE"
_NAMESPACES = ("--net", "--mount", "--uts", "--ipc")
_HOLD = "sleep 2147483647"


def available() -> Optional[str]:
    """None when simulated hosts can be made here, else the reason they cannot."""
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"the '{tool}' tool is not installed"
    # everything a host needs: its own /dev/shm, a bridge and a veth pair (kernels without them cannot)
    probe = subprocess.run(["unshare", *_NAMESPACES, "sh", "-c", "mount -t tmpfs tmpfs /dev/shm && ip link set lo up "
                            "&& ip link add br0 type bridge && ip link add a0 type veth peer name b0"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make network and mount namespaces here: {probe.stderr.strip() or probe.returncode}"
    return None


def mpi_unavailable() -> Optional[str]:
    """None when MPI jobs can run on simulated hosts here (namespaces, mpi4py and an mpiexec), else why not."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install 'mlusim[cluster]')"
    if shutil.which("mpiexec") is None:
        return "mpiexec is not installed (pip install 'mlusim[cluster]')"
    return available()


def _run(argv: Sequence[str]) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")


def _enter(pid: int) -> list[str]:
    return ["nsenter", "-t", str(pid), "--net", "--mount", "--uts", "--ipc", "--"]


def _hold(script: str) -> subprocess.Popen:
    """A process in new namespaces that runs `script` (setup) and then holds them until killed."""
    holder = subprocess.Popen(["unshare", *_NAMESPACES, "sh", "-c", f"{script}\necho ready\nexec {_HOLD}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True)
    if holder.stdout.readline().strip() != "ready":
        holder.kill()
        raise RuntimeError(f"could not set up a namespace: {holder.stderr.read().strip()}")
    return holder


class SimulatedHosts:
    """`count` hosts on private addresses 10.<net>.0.1 ... (see the module's docstring)."""

    def __init__(self, count: int, net: Optional[int] = None):
        if not isinstance(count, int) or not 1 <= count <= 250:
            raise ValueError(f"argument 'count': between 1 and 250 hosts, got {count!r}")
        self.count = count
        self.net = net if net is not None else 100 + os.getpid() % 150
        self.addresses = [f"10.{self.net}.0.{k + 1}" for k in range(count)]
        self.names = [f"{HOSTNAME_PREFIX}{k}" for k in range(count)]
        self._holders: list[Optional[subprocess.Popen]] = []
        self._switch: Optional[subprocess.Popen] = None
        self._ports = 0
        self.directory = ""
        self.hosts_file = ""
        self.launcher = ""
        self.state_file = ""

    # ---- lifetime ----------------------------------------------------------------------------------------------

    def start(self) -> "SimulatedHosts":
        reason = available()
        if reason is not None:
            raise RuntimeError(f"cannot simulate hosts: {reason}")
        try:
            self.directory = tempfile.mkdtemp(prefix="mlusim-hosts-")
            self.hosts_file = os.path.join(self.directory, "etc-hosts")
            with open(self.hosts_file, "w") as table:
                table.write("127.0.0.1 localhost\n" + "".join(f"{address} {name}\n" for address, name in
                                                             zip(self.addresses, self.names)))
            self._switch = _hold("ip link add br0 type bridge && ip link set br0 up && ip link set lo up")
            for k in range(self.count):
                self._holders.append(None)
                self.restart(k)
            self.record(os.path.join(self.directory, "hosts.json"))
        except BaseException:
            self.close()
            raise
        return self

    def restart(self, host: int) -> None:
        """(Re)make host `host`: fresh namespaces, its name and address, plugged into the switch."""
        self.power_off(host)
        holder = _hold(f"mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount --bind {self.hosts_file} /etc/hosts "
                       f"&& hostname {self.names[host]} && ip link set lo up")
        self._holders[host] = holder
        self._ports += 1
        port = f"mls{os.getpid() % 100000}p{self._ports}"
        _run(["ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", str(holder.pid)])
        _run(["ip", "link", "set", port, "netns", str(self._switch.pid)])
        _run(["nsenter", "-t", str(self._switch.pid), "--net", "--", "ip", "link", "set", port, "master", "br0",
              "up"])
        for command in (["ip", "addr", "add", f"{self.addresses[host]}/24", "dev", "eth0"],
                        ["ip", "link", "set", "eth0", "up"]):
            _run(["nsenter", "-t", str(holder.pid), "--net", "--", *command])
        if self.state_file:
            self.write_state(self.state_file)

    def record(self, path: str) -> None:
        """Write the hosts' state to `path` and the launcher that reads it (in the hosts' folder)."""
        self.state_file = path
        self.write_state(path)
        self.launcher = os.path.join(self.directory, "launcher")
        with open(self.launcher, "w") as script:
            script.write(f"#!/bin/sh\n{STATE_ENV}={path} exec {sys.executable} -m mlutools.hosts ssh \"$@\"\n")
        os.chmod(self.launcher, 0o755)

    def write_state(self, path: str) -> None:
        with open(path, "w") as state:
            json.dump({"addresses": self.addresses, "names": self.names, "pids": self.pids,
                       "switch": self._switch.pid if self._switch else 0, "directory": self.directory}, state)

    @property
    def pids(self) -> list[int]:
        return [holder.pid if holder is not None else 0 for holder in self._holders]

    def __enter__(self) -> "SimulatedHosts":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop every host (every process in it) and the switch."""
        for k in range(len(self._holders)):
            self.power_off(k)
        if self._switch is not None:
            _stop(self._switch)
            self._switch = None
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = ""

    def power_off(self, host: int) -> None:
        """Kill every process of host `host` at once (SIGKILL), as a machine that loses power."""
        holder = self._holders[host]
        if holder is None:
            return
        kill_namespace_processes(holder.pid)
        _stop(holder)
        self._holders[host] = None

    # ---- running -----------------------------------------------------------------------------------------------

    def command(self, host: int, argv: Sequence[str]) -> list[str]:
        """`argv` as a command line that runs inside host `host`."""
        return _enter(self.pids[host]) + list(argv)

    def run(self, host: int, argv: Sequence[str], **popen) -> subprocess.Popen:
        """Start `argv` inside host `host` (keyword arguments go to subprocess.Popen)."""
        popen.setdefault("start_new_session", True)
        return subprocess.Popen(self.command(host, argv), **popen)

    def mpiexec(self, ranks_per_host: Sequence[int], argv: Sequence[str], options: Sequence[str] = ()) -> list[str]:
        """An `mpiexec` command line (MPICH's hydra; `options` go before the program), to be run on host 0, starting
        `ranks_per_host[k]` ranks of `argv` on host k."""
        hosts = ",".join(f"{name}:{n}" for name, n in zip(self.names, ranks_per_host) if n)
        return ["mpiexec", "-launcher", "ssh", "-launcher-exec", self.launcher, "-hosts", hosts,
                "-n", str(sum(ranks_per_host)), *options, *argv]

    def torchrun(self, ranks_per_host: Sequence[int], host: int, argv: Sequence[str], port: int = 29400) -> list[str]:
        """The `torchrun` command line of host `host` (to be run there, one per host) for a job of
        `ranks_per_host[k]` workers on host k, meeting through the c10d rendezvous on host 0 at `port`; `argv` is the
        program and its arguments (`script.py ...` or `-m module ...`)."""
        return [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(len(ranks_per_host)),
                "--nproc-per-node", str(ranks_per_host[host]), "--rdzv-backend", "c10d",
                "--rdzv-endpoint", f"{self.names[0]}:{port}", *argv]


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def kill_namespace_processes(holder_pid: int) -> None:
    """SIGKILL every process whose network namespace is the holder's (the holder included)."""
    try:
        namespace = os.readlink(f"/proc/{holder_pid}/ns/net")
    except OSError:
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/net") == namespace:
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def _ssh(argv: list[str]) -> int:
    """The ssh stand-in: `[-x] [-o opt] ... <host> <command...>` runs the command in that host's namespaces."""
    with open(os.environ[STATE_ENV]) as state:
        hosts = json.load(state)
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in ("-o", "-p", "-l", "-i") and rest:
            rest.pop(0)
    if len(rest) < 2:
        print("mlutools.hosts ssh: expected a host and a command", file=sys.stderr)
        return 255
    host, command = rest[0], " ".join(rest[1:])
    host = host.split("@")[-1]
    known = {**{a: p for a, p in zip(hosts["addresses"], hosts["pids"])},
             **{n: p for n, p in zip(hosts["names"], hosts["pids"])}}
    pid = known.get(host)
    if not pid:
        print(f"mlutools.hosts ssh: no simulated host {host!r} (hosts: {', '.join(hosts['addresses'])})",
              file=sys.stderr)
        return 255
    os.execvp("nsenter", _enter(pid) + ["sh", "-c", command])
    return 255


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ssh"]:
        return _ssh(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m mlutools.hosts", description="Simulated hosts (namespaces).")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="make hosts and keep them until 'down' (prints their addresses)")
    up.add_argument("count", type=int)
    up.add_argument("--state", required=True, help="file that records the hosts (for 'down' and the launcher)")
    down = commands.add_parser("down", help="stop the hosts recorded in a state file")
    down.add_argument("--state", required=True)
    options = parser.parse_args(argv)
    if options.command == "up":
        hosts = SimulatedHosts(options.count).start()
        hosts.record(os.path.abspath(options.state))
        print(json.dumps({"addresses": hosts.addresses, "launcher": hosts.launcher}))
        os._exit(0)  # the holders live on in their own sessions
    with open(options.state) as state:
        recorded = json.load(state)
    for pid in recorded["pids"]:
        if pid:
            kill_namespace_processes(pid)
    if recorded.get("switch"):
        kill_namespace_processes(recorded["switch"])
    if recorded.get("directory"):
        shutil.rmtree(recorded["directory"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
