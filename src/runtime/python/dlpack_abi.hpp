// The few DLPack structures the binding reads (DLPack's dlpack.h, ABI v0.8; the layout has not changed since v0.6 and
// DLPack 1.0 keeps it for the unversioned "dltensor" capsule that `__dlpack__()` returns when no max_version is asked).
// Declared here, field for field, so that reading a framework's tensor needs no dlpack package: only these fields and
// the capsule name are the contract.
#pragma once

#include <cstdint>

namespace gemmtune::python::dlpack {

// DLDeviceType values that hold memory a kernel on a CUDA device can read.
constexpr std::int32_t kDLCPU = 1;
constexpr std::int32_t kDLCUDA = 2;
constexpr std::int32_t kDLCUDAHost = 3;     // pinned host memory: not a device array
constexpr std::int32_t kDLCUDAManaged = 13;

// DLDataTypeCode values.
constexpr std::uint8_t kDLInt = 0;
constexpr std::uint8_t kDLUInt = 1;
constexpr std::uint8_t kDLFloat = 2;

// The name of an unconsumed legacy DLPack capsule.
constexpr const char* kCapsuleName = "dltensor";

struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

}  // namespace gemmtune::python::dlpack
