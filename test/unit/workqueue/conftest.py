import threading

import pytest


@pytest.fixture(autouse=True)
def no_leaked_queue_threads():
    """Every queue thread a test starts is stopped by the end of that test (threads of other tests don't count)."""
    before = set(threading.enumerate())
    yield
    leaked = [t.name for t in threading.enumerate() if t not in before and t.name.startswith("workqueue-")]
    assert not leaked, f"queue threads still running: {leaked}"
