"""LazyModule: a module imported on first attribute access, safely from several threads, seeing monkeypatches."""
import sys
import threading

import pytest

from mlusim.lazymodule import LazyModule


@pytest.fixture
def fresh_module(tmp_path, monkeypatch):
    """The name of a module that is not imported yet and counts how often its body runs."""
    (tmp_path / "lazy_probe.py").write_text("import builtins\n"
                                            "builtins.lazy_probe_runs = getattr(builtins, 'lazy_probe_runs', 0) + 1\n"
                                            "VALUE = 42\n"
                                            "def double(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_probe", raising=False)
    import builtins
    monkeypatch.setattr(builtins, "lazy_probe_runs", 0, raising=False)
    return "lazy_probe"


def test_the_module_is_imported_at_the_first_attribute_read(fresh_module):
    lazy = LazyModule(fresh_module)
    assert fresh_module not in sys.modules and "not imported yet" in repr(lazy)
    assert lazy.double(21) == lazy.VALUE == 42
    assert fresh_module in sys.modules and "imported" in repr(lazy)
    with pytest.raises(AttributeError):
        lazy.missing


def test_first_reads_from_several_threads_import_once(fresh_module):
    import builtins
    lazy, values, start = LazyModule(fresh_module), [], threading.Barrier(8)

    def read():
        start.wait()
        values.append(lazy.VALUE)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert values == [42] * 8 and builtins.lazy_probe_runs == 1


def test_a_monkeypatched_attribute_is_seen(fresh_module, monkeypatch):
    lazy = LazyModule(fresh_module)
    assert lazy.VALUE == 42
    monkeypatch.setattr(sys.modules[fresh_module], "VALUE", 7)
    assert lazy.VALUE == 7
