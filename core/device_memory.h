// Telling CUDA device memory from host memory without linking CUDA.
//
// Until the device path exists, a device buffer handed to a host collective
// must be refused, not dereferenced. braid asks the CUDA driver only when the
// application has already loaded it (dlopen with RTLD_NOLOAD), so CPU-only
// programs never load or depend on CUDA.
#pragma once

namespace braid {

/// True when `ptr` is CUDA device memory the host cannot read (managed
/// memory counts as host-readable). False when CUDA is not in use.
bool isDeviceMemory(const void* ptr);

/// The CUDA device ordinal of `ptr`, which isDeviceMemory already called device memory (it is
/// not asked again); -1 when the driver does not say. Under setDeviceMemoryQueryForTesting,
/// fake device memory is on device 0.
int deviceOrdinal(const void* ptr);

/// Tests only: while set, `query` alone decides what isDeviceMemory says, so the C API's
/// device route (and the host proxy) runs on a CPU fake of CUDA. Null restores CUDA's answer.
using DeviceMemoryQuery = bool (*)(const void* ptr);
void setDeviceMemoryQueryForTesting(DeviceMemoryQuery query);

}  // namespace braid
