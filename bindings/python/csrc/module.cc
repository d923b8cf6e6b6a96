// The Python extension braid._torch_backend: the factory that torch.distributed calls to
// create a "braid" backend, and the BraidBackend type (a subclass of torch's Backend) so
// that Python sees its extra methods. braid/torch.py registers the factory.
#include <torch/csrc/utils/pybind.h>

#include <chrono>

#include "backend.h"

namespace py = pybind11;
using braid::torch_backend::BraidBackend;

namespace {

// Creates the backend of one process group. `splitFrom` is the parent backend that
// torch.distributed offers when the default group is bound to a device: a braid parent
// is split with braidCommSplit (its non-members call perform_nocolor_split), anything
// else means a fresh rendezvous through `store`.
c10::intrusive_ptr<BraidBackend> createBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                               int rank, int size, double timeoutSeconds,
                                               const py::object& splitFrom) {
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000.0));
  BraidBackend* parent = nullptr;
  if (!splitFrom.is_none() && py::isinstance<BraidBackend>(splitFrom)) {
    parent = splitFrom.cast<BraidBackend*>();
  }
  py::gil_scoped_release noGil;  // rendezvous waits for the other ranks
  if (parent != nullptr) {
    auto child = parent->splitByColor(/*color=*/0, /*key=*/rank);
    TORCH_CHECK(child && child->getSize() == size && child->getRank() == rank,
                "braid: splitting the parent group gave a group that does not match rank ", rank,
                " of ", size);
    return child;
  }
  return BraidBackend::create(store, rank, size, timeout);
}

}  // namespace

PYBIND11_MODULE(_torch_backend, m) {
  m.doc() = "braid's c10d process-group backend (registered by `import braid.torch`)";
  py::object backendType = py::module_::import("torch._C._distributed_c10d").attr("Backend");
  py::class_<BraidBackend, c10::intrusive_ptr<BraidBackend>>(m, "BraidBackend", backendType)
      .def(
          "perform_nocolor_split",
          [](BraidBackend& self, const py::object& /*device*/) {
            self.splitByColor(BRAID_SPLIT_NOCOLOR, 0);
          },
          py::call_guard<py::gil_scoped_release>(),
          "Takes part in a split of this group without joining the new group.")
      .def(
          "split_by_color",
          [](BraidBackend& self, int color, int key) { return self.splitByColor(color, key); },
          py::call_guard<py::gil_scoped_release>(), py::arg("color"), py::arg("key"),
          "braidCommSplit: ranks passing the same color form a group, ordered by key; "
          "a negative color joins none and returns None.");
  m.def("create_backend", &createBackend, py::arg("store"), py::arg("rank"), py::arg("size"),
        py::arg("timeout_seconds"), py::arg("split_from") = py::none());
}
