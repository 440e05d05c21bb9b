"""DataLoader(pin_memory=True) on mlu: batches come pinned (cnrtHostMalloc buffers) from the pin-memory thread,
non_blocking copies to the device are right; worker processes too."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def _dataset(n=64):
    return TensorDataset(torch.arange(n * 3, dtype=torch.float32).reshape(n, 3), torch.arange(n))


def test_pinned_batches_and_non_blocking_copies():
    loader = DataLoader(_dataset(), batch_size=16, pin_memory=True)
    seen = []
    for features, labels in loader:
        assert features.is_pinned() and labels.is_pinned()
        on_device = features.to("mlu", non_blocking=True)
        labels_on_device = labels.to("mlu", non_blocking=True)
        seen.append((on_device, labels_on_device, features, labels))
    torch.mlu.synchronize()
    for on_device, labels_on_device, features, labels in seen:
        assert torch.equal(on_device.cpu(), features) and torch.equal(labels_on_device.cpu(), labels)
    assert len(seen) == 4


def test_worker_processes_with_pin_memory():
    loader = DataLoader(_dataset(32), batch_size=8, pin_memory=True, num_workers=2,
                        multiprocessing_context="fork")
    total = torch.zeros((), device="mlu")
    for features, labels in loader:
        assert features.is_pinned()
        total += features.to("mlu", non_blocking=True).sum()
    assert total.item() == float(torch.arange(32 * 3).sum())
