"""Simulated hosts (mlutools/hosts.py): each its own name, address, /dev/shm and IPC; reachable from one another
over their bridge; the ssh stand-in runs a command inside a host; a host powered off loses its processes."""
import subprocess
import sys

import pytest

from mlutools import hosts as simulated

pytestmark = pytest.mark.child_processes

if simulated.available():
    pytest.skip(f"simulated hosts are not available here: {simulated.available()}", allow_module_level=True)


def _output(machines, host, script):
    done = machines.run(host, [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True)
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    return out.strip()


@pytest.fixture(scope="module")
def machines():
    with simulated.SimulatedHosts(2) as made:
        yield made


def test_every_host_has_its_own_name_and_shared_memory(machines):
    names = [_output(machines, host, "import socket; print(socket.gethostname())") for host in range(2)]
    assert names == machines.names
    _output(machines, 0, "open('/dev/shm/mlusim-hosts-probe', 'w').write('host 0')")
    seen = [_output(machines, host, "import os; print(os.path.exists('/dev/shm/mlusim-hosts-probe'))")
            for host in range(2)]
    assert seen == ["True", "False"]


def test_hosts_reach_each_other_by_name_over_their_network(machines):
    server = machines.run(1, [sys.executable, "-c", "import socket\n"
                              "s = socket.create_server(('0.0.0.0', 4711)); print('up', flush=True)\n"
                              "c, a = s.accept(); c.sendall(socket.gethostname().encode()); c.close()"],
                          stdout=subprocess.PIPE, text=True)
    assert server.stdout.readline().strip() == "up"
    reply = _output(machines, 0, f"import socket\nc = socket.create_connection(('{machines.names[1]}', 4711), 5)\n"
                                 f"print(c.recv(100).decode())")
    assert reply == machines.names[1]
    assert server.wait(10) == 0
    address = _output(machines, 0, f"import socket; print(socket.gethostbyname('{machines.names[1]}'))")
    assert address == machines.addresses[1]


def test_the_ssh_stand_in_runs_a_command_on_the_named_host(machines):
    done = subprocess.run([machines.launcher, "-x", "-o", "BatchMode=yes", machines.names[1], "hostname"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == machines.names[1], done.stderr
    done = subprocess.run([machines.launcher, "-x", "nowhere", "hostname"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 255 and "no simulated host 'nowhere'" in done.stderr


def test_a_host_powered_off_loses_its_processes_and_can_be_made_again():
    with simulated.SimulatedHosts(2) as machines:
        sleeper = machines.run(1, ["sleep", "600"])
        _wait_until_inside(sleeper.pid, machines.pids[1])
        machines.power_off(1)
        assert sleeper.wait(10) != 0
        machines.restart(1)
        assert _output(machines, 1, "import socket; print(socket.gethostname())") == machines.names[1]


def test_bad_host_counts_are_refused():
    for count in (0, 251, "2"):
        with pytest.raises(ValueError, match="argument 'count'"):
            simulated.SimulatedHosts(count)


def test_hosts_made_by_the_command_last_until_down(tmp_path):
    import json
    import os

    state = tmp_path / "hosts.json"
    up = subprocess.run([sys.executable, "-m", "mlutools.hosts", "up", "2", "--state", str(state)],
                        capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stderr
    printed, recorded = json.loads(up.stdout), json.loads(state.read_text())
    assert printed["addresses"] == recorded["addresses"]
    done = subprocess.run([printed["launcher"], "-x", recorded["names"][1], "hostname"], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == recorded["names"][1], done.stderr
    assert subprocess.run([sys.executable, "-m", "mlutools.hosts", "down", "--state", str(state)],
                          timeout=60).returncode == 0
    assert not any(_running(pid) for pid in recorded["pids"])
    assert not os.path.exists(recorded["directory"])


def _wait_until_inside(pid: int, holder: int) -> None:
    """Until process `pid` (started through nsenter) has entered the network namespace of host holder `holder`."""
    import os
    import time

    target, deadline = os.readlink(f"/proc/{holder}/ns/net"), time.monotonic() + 10
    while os.readlink(f"/proc/{pid}/ns/net") != target:
        assert time.monotonic() < deadline, "the process never entered the host"
        time.sleep(0.01)


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (a killed one may linger a moment as a zombie until it is reaped)."""
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.05)
    return True
