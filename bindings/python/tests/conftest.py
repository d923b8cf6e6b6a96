"""pytest hooks for the braid Python tests: outside BRAID_TORCH_SUITE=full, only the CI
subset of PyTorch's distributed suite (test_torch_suite.CI_TESTS) is collected."""
import os


def pytest_collection_modifyitems(config, items):
    if os.environ.get("BRAID_TORCH_SUITE", "ci") == "full":
        return
    keep, drop = [], []
    for item in items:
        module = getattr(item, "module", None)
        subset = getattr(module, "CI_TESTS", None)
        (drop if subset is not None and item.name not in subset else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
