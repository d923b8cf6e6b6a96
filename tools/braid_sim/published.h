// Published NCCL figures braid-sim --compare sets its predictions against. Each row says
// where the figure comes from; "derived" rows turn a maintainer's per-NIC statement into
// a bus bandwidth (per-NIC rate times NICs per host, the bound a cross-host ring meets).
#pragma once

namespace braid::sim {

struct PublishedFigure {
  const char* host;  // the topology file's host name this figure is about
  int gpus;
  const char* algorithm;  // what NCCL ran
  double sizeBytes;
  double busbwLow, busbwHigh;  // GB/s
  const char* source;
};

inline constexpr PublishedFigure kPublished[] = {
    {"dgx-h100", 8, "nvls", 8.0 * (1 << 30), 476, 480,
     "NVIDIA/nccl-tests#290 (maintainer: 476 GB/s 'in the expected range for H100', NVLS); "
     "GTC S62129 via NVIDIA/nccl#1374 (480 GB/s)"},
    {"dgx-h100", 16, "ring", 8.0 * (1 << 30), 368, 384,
     "derived: NVIDIA/nccl-tests#290, maintainer: 'For NDR @ 400Gbps you should see "
     "46-48GB/s per NIC' x 8 NICs per DGX H100 (NCCL_ALGO=RING)"},
    {"hgx-a100-4nic", 24, "auto", 128.0 * (1 << 20), 84.8, 96,
     "NVIDIA/nccl-tests#119: 3 servers x 8 A100 + 4 HDR, all_reduce_perf to 128 MB: "
     "average 84.8, peak 96 GB/s (100 theoretical)"},
};

}  // namespace braid::sim
