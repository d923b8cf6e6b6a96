# shellcheck shell=bash
# Sourced (tests/ktls/ktls_checks.sh, perf/tls/ktls_guest_bench.sh) inside the guest of
# tests/rdma/guest: load_tls MODULE_ROOT loads the kernel's TLS module from the guest
# kernel's unpacked package (MODULE_ROOT holds lib/modules/<uname -r>/kernel somewhere
# below it: the guest's --cache folder). tls.ko depends on no module, but its AES-GCM comes
# from crypto modules the kernel would ask modprobe for, which the guest has not (nor a
# modules.dep): they are loaded first, in order. Returns non-zero, saying why, on failure.
readonly kTlsModules="crypto/gf128mul crypto/ghash-generic crypto/ctr crypto/gcm crypto/cryptd
  crypto/crypto_simd arch/x86/crypto/aesni-intel net/tls/tls"
load_tls() {  # MODULE_ROOT
  local dir m name
  dir=$(find "$1" -maxdepth 6 -type d -path "*/lib/modules/$(uname -r)/kernel" | head -1)
  [[ -n $dir ]] || { echo "no modules of kernel $(uname -r) under $1"; return 1; }
  for m in $kTlsModules; do
    name=${m##*/}
    grep -q "^${name//-/_} " /proc/modules && continue  # already loaded
    busybox insmod "$dir/$m.ko" || { echo "insmod $dir/$m.ko failed"; return 1; }
  done
  [[ -r /proc/net/tls_stat ]] || { echo "tls loaded, but /proc/net/tls_stat is missing"; return 1; }
}
